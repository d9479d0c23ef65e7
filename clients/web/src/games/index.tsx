// One module per game's view; a game the page does not know (installed on the server as a package of its own)
// gets the generic view, titled as the server's welcome says (its manifest).
import type { GameModule } from "./common";
import { genericGame } from "./generic";
import { kupcy } from "./kupcy";
import { parsimonia } from "./parsimonia";
import { tulips } from "./tulips";

export const GAMES: Record<string, GameModule> = { parsimonia, "gift-of-tulips": tulips, kupcy };

export const gameModule = (name: string, title?: string): GameModule => GAMES[name] ?? genericGame(title ?? name);
