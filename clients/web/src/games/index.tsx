// One module per game's view; a game the page does not know gets the placeholder.
import type { GameModule } from "./common";
import { kupcy } from "./kupcy";
import { parsimonia } from "./parsimonia";
import { tulips } from "./tulips";

export const GAMES: Record<string, GameModule> = { parsimonia, "gift-of-tulips": tulips, kupcy };
function Unknown() {
  return <section class="panel"><p role="status">This page does not know this game yet: follow it in the event log below.</p></section>;
}

export const gameModule = (name: string): GameModule => GAMES[name] ?? { title: name, View: Unknown, describe: () => null };
