// A player's whole picture: static ∪ view ∪ private ∪ {seat} (protocol/SPEC.md, "Session order" 5), and
// helpers for `legal` templates, where a field {"min": a, "max": b} may take any integer in a..b.

/**
 * @param {Record<string, any> | null | undefined} staticPart from joined / watching / resumed
 * @param {Record<string, any> | null | undefined} view the public part
 * @param {Record<string, any> | null | undefined} privatePart the seat's own part (absent for a spectator)
 * @param {number | null | undefined} seat nil for a spectator
 * @returns {Record<string, any>}
 */
export function assemble(staticPart, view, privatePart, seat) {
  return { ...(staticPart ?? {}), ...(view ?? {}), ...(privatePart ?? {}), seat: seat ?? null };
}

/** @param {unknown} value @returns {value is {min: number, max: number}} */
export function isRange(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    && Object.keys(value).length === 2 && typeof (/** @type {any} */ (value).min) === "number"
    && typeof (/** @type {any} */ (value).max) === "number";
}

/**
 * The legal templates of a type whose fixed fields match `fields`.
 * @param {Record<string, any>[]} legal @param {string} type @param {Record<string, any>} [fields]
 */
export function findLegal(legal, type, fields = {}) {
  return (legal ?? []).filter((t) => t.type === type
    && Object.entries(fields).every(([k, v]) => t[k] === v || (isRange(t[k]) && typeof v === "number"
      && v >= t[k].min && v <= t[k].max)));
}

/**
 * A command from a template: ranges take the given value, else their minimum.
 * @param {Record<string, any>} template @param {Record<string, any>} [values]
 */
export function fill(template, values = {}) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const [k, v] of Object.entries(template)) {
    if (k in values) out[k] = values[k];
    else out[k] = isRange(v) ? v.min : v;
  }
  return out;
}
