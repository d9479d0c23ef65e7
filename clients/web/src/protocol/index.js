export { Client, ProtocolError, PROTOCOL_VERSION } from "./client.js";
export { ClockOffset } from "./clock.js";
export { assemble, fill, findLegal, isRange } from "./view.js";
