// Seat codes, apart from the page's connection so that they are testable under Node.

/** A seat code or link: `http://HOST:PORT/#t3/TOKEN`, `#t3/TOKEN`, `t3/TOKEN` or `t3 TOKEN`. */
export function parseSeatCode(text: string): { table: string; token: string } | null {
  const s = text.trim().replace(/^.*#/, "");
  const m = /^([A-Za-z0-9_.-]{1,64})[\/\s]+([A-Za-z0-9][A-Za-z0-9_-]{0,127})$/.exec(s);
  return m ? { table: m[1], token: m[2] } : null;
}
