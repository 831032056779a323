/**
 * What the desktop shell's readings of the PC's idle time (Electron's
 * powerMonitor.getSystemIdleTime, whole seconds since the last keyboard or pointer input
 * anywhere) say about someone at the station. On some desktops (GNOME on Wayland, some Windows
 * sessions) the reading stays 0 whatever happens: taken at its word, the station would count as
 * in use for good, and the idle rule would never log anyone off nor end a usage. A person
 * pauses for a second now and then; a reading of exactly 0 at every sample for this long is the
 * desktop not telling, and from then on only input in the station's own window counts
 * (session.touch), until a reading other than 0 shows the desktop tells again.
 */
export const STUCK_AT_ZERO_MS = 30 * 60_000;

/** Below this many seconds since the last input, someone is at the PC. */
export const RECENT_INPUT_SECONDS = 15;

export class SystemIdleReadings {
  /** Since when every reading was exactly 0; null after one that was not. */
  private zeroSince: number | null = null;
  private untrusted = false;

  /**
   * Takes a reading made at `now` (ms); whether it shows recent input to count (Station.touch).
   * `onUntrusted` is called once when the readings stop being believed.
   */
  note(idleSeconds: number, now: number, onUntrusted?: () => void): boolean {
    if (idleSeconds !== 0) {
      this.zeroSince = null;
      this.untrusted = false;
      return idleSeconds < RECENT_INPUT_SECONDS;
    }
    this.zeroSince ??= now;
    if (!this.untrusted && now - this.zeroSince >= STUCK_AT_ZERO_MS) {
      this.untrusted = true;
      onUntrusted?.();
    }
    return !this.untrusted;
  }
}
