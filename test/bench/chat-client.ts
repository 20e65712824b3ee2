/**
 * Bench-side clients (not a bench module itself): a local-chat user that talks like the web page
 * does, and a timer of the app's model calls.
 */
import { performance } from "node:perf_hooks";

/** One message from Familiar as `GET /api/local/messages` returns it. */
interface LocalReply {
  id: string;
  text: string;
}

/**
 * A local-chat user. `turn` posts a message while a long-poll is open (as the page keeps one open)
 * and resolves when the reply is readable through `GET /api/local/messages?wait=`. It tracks the
 * typing flag like the page: a poll that says "typing" is answered again with `typing=1`, so the
 * server holds it until the reply (or the end of typing) instead of answering at once.
 */
export class ChatUser {
  private cursor = "0";
  private typing = false;
  private counter = 0;

  constructor(
    private readonly baseUrl: string,
    readonly user: string,
  ) {}

  /**
   * Sends `text` and waits for the next message from Familiar. Returns the reply and the times (from
   * `performance.now()`) the POST started and the reply was read. Throws on a non-202 POST or when
   * no reply arrives within `timeoutMs`.
   */
  async turn(text: string, timeoutMs = 30_000): Promise<{ reply: LocalReply; startedAt: number; readAt: number }> {
    const startedAt = performance.now();
    const poll = this.nextReply(timeoutMs);
    const res = await fetch(`${this.baseUrl}/api/local/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: this.user, text, clientMessageId: `${this.user}-${++this.counter}` }),
    });
    const body = await res.text();
    if (res.status !== 202) throw new Error(`POST /api/local/messages for ${this.user}: ${res.status} ${body}`);
    const reply = await poll;
    return { reply, startedAt, readAt: performance.now() };
  }

  /** Long-polls until at least one new message arrives; returns the first one. */
  private async nextReply(timeoutMs: number): Promise<LocalReply> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = Math.round(deadline - performance.now());
      if (left <= 0) throw new Error(`no reply for ${this.user} within ${timeoutMs} ms`);
      const query = `user=${encodeURIComponent(this.user)}&after=${this.cursor}&wait=${Math.min(left, 20_000)}&typing=${this.typing ? 1 : 0}`;
      const res = await fetch(`${this.baseUrl}/api/local/messages?${query}`);
      if (res.status !== 200) throw new Error(`GET /api/local/messages for ${this.user}: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { messages: LocalReply[]; cursor: string; typing: boolean };
      this.cursor = body.cursor;
      this.typing = body.typing;
      if (body.messages.length > 0) {
        this.typing = false;
        return body.messages[0]!;
      }
    }
  }
}

/** One model call as the app's HTTP client saw it (`performance.now()` times). */
export interface ModelCall {
  start: number;
  end: number;
}

/**
 * Times the app's model calls from the client side. The openai SDK takes `globalThis.fetch` when
 * the client is constructed, so install this before `startApp`. Each call to a URL under
 * `baseUrl` is recorded from the `fetch` call to the response body being fully read (the body is
 * buffered here and handed to the SDK as an equivalent Response): this contains the fake server's
 * own time between receiving the request and answering, plus the HTTP round trip on loopback.
 */
export function installModelTimer(baseUrl: string): { calls: ModelCall[]; restore(): void; overlap(from: number, to: number): { ms: number; count: number } } {
  const original = globalThis.fetch;
  const calls: ModelCall[] = [];
  const timed: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(baseUrl)) return original(input, init);
    const start = performance.now();
    const res = await original(input, init);
    const body = await res.arrayBuffer();
    calls.push({ start, end: performance.now() });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  globalThis.fetch = timed;
  return {
    calls,
    restore() {
      if (globalThis.fetch === timed) globalThis.fetch = original;
    },
    /** Total time of model calls inside [from, to] (calls clipped to the window) and how many touched it. */
    overlap(from, to) {
      let ms = 0;
      let count = 0;
      for (const c of calls) {
        const a = Math.max(c.start, from);
        const b = Math.min(c.end, to);
        if (b > a) {
          ms += b - a;
          count++;
        }
      }
      return { ms, count };
    },
  };
}
