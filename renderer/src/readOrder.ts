/**
 * The order of repeated reads of one list. Reads can answer out of order (the HTTP carrier uses
 * several connections, and a large answer takes longer), so an answer asked for before one
 * already shown holds older data than the screen: it is dropped rather than shown over it.
 */
export interface ReadOrder {
  /** Numbers a read as it is asked for; give the number to `take` when its answer comes. */
  ask(): number;
  /**
   * Whether the answer (or failure) of read `ticket` may be shown: false when a read asked for
   * after it has been shown already. When true, the read counts as shown.
   */
  take(ticket: number): boolean;
  /** Whether no read was asked for after read `ticket` (a loading mark can end). */
  isLatest(ticket: number): boolean;
  /** Drops every answer still to come, e.g. at logoff: it is not shown to whoever comes next. */
  forget(): void;
}

export function readOrder(): ReadOrder {
  let asked = 0;
  let shown = 0;
  return {
    ask: () => (asked += 1),
    take(ticket) {
      if (ticket < shown) return false;
      shown = ticket;
      return true;
    },
    isLatest: (ticket) => ticket === asked,
    forget() {
      asked += 1;
      shown = asked;
    },
  };
}
