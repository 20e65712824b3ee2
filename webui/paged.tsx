/** Paged lists from the API (`{items, next}`), their "Load more" and their empty state. */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "./api.js";

/** A paginated list from the API: `{items, next}`; `more()` loads the next page. */
export function usePaged<T>(url: string | null) {
  const [items, setItems] = useState<T[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState("");
  const [loaded, setLoaded] = useState(false);
  const load = async (after: string | null) => {
    if (!url) return;
    try {
      const sep = url.includes("?") ? "&" : "?";
      const page = await api<{ items: T[]; next: string | null }>("GET", `${url}${after ? `${sep}after=${encodeURIComponent(after)}` : ""}`);
      setItems((list) => (after ? [...list, ...page.items] : page.items));
      setNext(page.next);
      setError("");
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setLoaded(true);
    }
  };
  useEffect(() => void load(null), [url]);
  return { items, next, error, loaded, reload: () => load(null), more: () => load(next) };
}

/** "Load more" for a paged list, and its error. */
export function Pager(props: { next: string | null; error: string; more: () => void }) {
  return (
    <>
      {props.error && <p role="alert" class="error">{props.error}</p>}
      {props.next && (
        <button type="button" class="more" onClick={props.more}>
          Load more
        </button>
      )}
    </>
  );
}

export function Empty(props: { loaded: boolean; count: number; children: ComponentChildren }) {
  return props.loaded && props.count === 0 ? <p class="empty">{props.children}</p> : null;
}

