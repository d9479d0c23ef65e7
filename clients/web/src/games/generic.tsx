// A game this page has no module for (one installed on the server as a package of its own): its picture as
// it comes, field by field, and every legal command as a form, where a field given as {min, max} is a number
// to choose and any other is sent as given (protocol/SPEC.md, `legal`). Such a game plays here with nothing
// added to the page; its events read as the generic log lines.
import { useState } from "preact/hooks";
import { fill, isRange } from "../protocol/view.js";
import { Countdown } from "../app/countdown";
import type { GameModule, GameProps } from "./common";

/** Fields every game's picture has, which the page shows elsewhere (the head, the waiting room, the result). */
const SHOWN_ELSEWHERE = new Set(["game", "seats", "seat_count", "paused", "seat", "result", "config"]);

export const genericGame = (title: string): GameModule => ({ title, View: GenericView, describe: () => null });

/** A value in a few words: lists joined, nothing as a dash, maps as their pairs. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return v.length ? v.map(valueText).join(", ") : "none";
  if (typeof v === "object") return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${valueText(x)}`).join("; ");
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

/** A field named as a deadline holds a time in server ms: shown as a countdown. */
const isDeadline = (key: string, v: unknown) => typeof v === "number" && /(^|_)deadline$/.test(key);

/** The label of a template's button: its type, then its fixed fields. */
export function commandLabel(template: Record<string, any>): string {
  const fixed = Object.entries(template).filter(([k, v]) => k !== "type" && !isRange(v));
  const words = String(template.type).replace(/_/g, " ");
  return fixed.length ? `${words} (${fixed.map(([k, v]) => `${k} ${valueText(v)}`).join(", ")})` : words;
}

/** The command a template's form sends: each range's chosen number (kept within its bounds), the rest as given. */
export function commandFrom(template: Record<string, any>, chosen: Record<string, string>): Record<string, any> {
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(template)) {
    if (!isRange(v)) continue;
    const n = Math.trunc(Number(chosen[k] ?? v.min));
    values[k] = Number.isFinite(n) ? Math.min(v.max, Math.max(v.min, n)) : v.min;
  }
  return fill(template, values);
}

function CommandForm(props: { template: Record<string, any>; act: GameProps["act"] }) {
  const { template, act } = props;
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const ranges = Object.entries(template).filter(([, v]) => isRange(v)) as [string, { min: number; max: number }][];
  return (
    <form class="command" data-type={template.type} onSubmit={(e) => { e.preventDefault(); act(commandFrom(template, chosen)); }}>
      {ranges.map(([k, r]) => (
        <label key={k}>{k} <input type="number" name={k} min={r.min} max={r.max} value={chosen[k] ?? String(r.min)}
          onInput={(e) => setChosen({ ...chosen, [k]: (e.target as HTMLInputElement).value })} /> ({r.min} to {r.max})</label>
      ))}
      <button type="submit" class={`act ${template.type}`}>{commandLabel(template)}</button>
    </form>
  );
}

function GenericView(props: GameProps) {
  const { pic, legal, act } = props;
  const fields = Object.entries(pic).filter(([k]) => !SHOWN_ELSEWHERE.has(k));
  return (
    <section class="panel generic" aria-label="the game">
      <dl>
        {fields.map(([k, v]) => [
          <dt key={`${k}-name`}>{k.replace(/_/g, " ")}</dt>,
          <dd key={`${k}-value`} data-field={k}>{isDeadline(k, v) ? <Countdown deadline={v as number} /> : valueText(v)}</dd>,
        ])}
      </dl>
      {legal.length ? <div class="commands" aria-label="what you may do">{legal.map((t, i) => <CommandForm key={`${i}-${JSON.stringify(t)}`} template={t} act={act} />)}</div>
        : <p class="quiet">Nothing for you to do now.</p>}
    </section>
  );
}
