// A deadline in server time as a live countdown, corrected by the ping/pong offset; frozen while the table
// is paused (then the time left is counted from the view's own server time).
import { client, useTick } from "./conn";

export function clockText(ms: number): string {
  const s = Math.ceil(Math.max(0, ms) / 1000);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(sec).padStart(2, "0")}` : `${m}:${String(sec).padStart(2, "0")}`;
}

export function Countdown(props: { deadline: number | null | undefined; paused?: boolean; at?: number; label?: string }) {
  useTick(250);
  const { deadline, paused, at, label } = props;
  if (deadline == null) return <span class="countdown off">{label ? `${label} –` : "–"}</span>;
  const left = paused ? Math.max(0, deadline - (at ?? deadline)) : client.clock.remaining(deadline, client.now());
  const urgent = !paused && left < 10000;
  return (
    <span class={`countdown${urgent ? " urgent" : ""}${paused ? " paused" : ""}`} data-deadline={deadline}
      data-left={Math.round(left)} aria-label={`${label ?? "time left"}: ${clockText(left)}${paused ? ", paused" : ""}`}>
      {label ? `${label} ` : ""}{clockText(left)}{paused ? <span class="pause-icon" aria-hidden="true" /> : null}
    </span>
  );
}
