// Kupcy: the protocol has no Kupcy section yet, so the page shows its seats and the raw public view only.
import type { GameModule, GameProps } from "./common";

function View({ pic }: GameProps) {
  return (
    <section class="panel">
      <h3>Kupcy</h3>
      <p role="status">Kupcy is not supported by this page yet: its protocol section is not written. Play it with a bot or
        the Python SDK; spectators may follow the event log below.</p>
      <details><summary>Public view (raw)</summary><pre>{JSON.stringify({ ...pic, cards: undefined }, null, 1)}</pre></details>
    </section>
  );
}

export const kupcy: GameModule = { title: "Kupcy", View, describe: () => null };
