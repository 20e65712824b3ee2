/**
 * Cursor pagination, the one shape every listing port speaks.
 */
/** Page of results with an opaque cursor for the next page (absent on the last page). */
export interface Page<T> {
  items: T[];
  next?: string;
}

/** Cursor pagination request: at most `limit` items (default 50, max 500) after `after`. */
export interface PageRequest {
  limit?: number;
  after?: string;
}
