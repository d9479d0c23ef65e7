// Server time from ping/pong: offset = server_time - (t0 + t1) / 2, keeping the estimate of the fastest
// recent round trip (protocol/SPEC.md, "Timing rules"). A deadline d falls at local time d - offset.

/** The offset estimate from a few recent samples: the one with the smallest round trip wins. */
export class ClockOffset {
  /** @param {number} [keep] how many recent samples to choose among */
  constructor(keep = 8) {
    this.keep = keep;
    /** @type {{offset: number, rtt: number}[]} */
    this.samples = [];
    /** @type {number | null} ms to add to the local clock to get server time */
    this.offset = null;
    /** @type {number | null} the round trip of the kept estimate, ms */
    this.rtt = null;
    /** @type {number | null} the latest round trip, ms */
    this.lastRtt = null;
  }

  /**
   * One ping/pong.
   * @param {number} t0 local ms when the ping was sent
   * @param {number} t1 local ms when the pong came
   * @param {number} serverTime the pong's server_time
   */
  sample(t0, t1, serverTime) {
    const rtt = Math.max(0, t1 - t0);
    this.lastRtt = rtt;
    this.samples.push({ offset: serverTime - (t0 + t1) / 2, rtt });
    if (this.samples.length > this.keep) this.samples.shift();
    let best = this.samples[0];
    for (const s of this.samples) if (s.rtt <= best.rtt) best = s;
    this.offset = best.offset;
    this.rtt = best.rtt;
  }

  /** A fresh start from a server time seen at local time `local` (a connection's `welcome`): the samples of
   * an earlier connection are dropped, since the server may have been restarted meanwhile, its clock resuming
   * where it stopped (a rough estimate until the first pong). */
  seed(local, serverTime) {
    this.samples = [];
    this.offset = serverTime - local;
    this.rtt = null;
  }

  /** Server time now, from the local clock `local` (ms). */
  serverNow(local) {
    return local + (this.offset ?? 0);
  }

  /** Milliseconds left until server deadline `deadline`, at local time `local` (never below 0). */
  remaining(deadline, local) {
    return Math.max(0, deadline - this.serverNow(local));
  }
}
