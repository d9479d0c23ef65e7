// One module per game's view; a game the page does not know gets the placeholder.
import type { GameModule } from "./common";
import { kupcy } from "./kupcy";
import { parsimonia } from "./parsimonia";
import { tulips } from "./tulips";

export const GAMES: Record<string, GameModule> = { parsimonia, "gift-of-tulips": tulips, kupcy };
export const gameModule = (name: string): GameModule => GAMES[name] ?? { ...kupcy, title: name };
