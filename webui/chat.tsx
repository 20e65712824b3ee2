import type { RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, localTime, newClientId, onChannel, shortTime, type Session } from "./api.js";
import { ApprovalCard, type ApprovalCardView } from "./approval-card.js";
import { AttachButton, Attachments, ChosenFiles, isLoggedAs, sendWithFiles, type ChatAttachment } from "./chat-files.js";
import { renderMarkdown } from "./markdown.js";
import { loadDrafts, saveDrafts } from "./drafts.js";
import { MESSAGE_COUNTER_FROM, MESSAGE_TEXT_MAX, formatCount, tooLongMessage } from "../web/shared/index.js";

/** One entry of the person's chat log. */
interface Item {
  id: string;
  seq: number;
  role: "user" | "assistant";
  channel: string;
  text: string;
  buttons: { id: string; label: string }[];
  /** An approval card's structured view; `text` is its markdown form. */
  card?: ApprovalCardView;
  /** Files sent with it (Familiar's: images shown inline, others as links). */
  attachments?: ChatAttachment[];
  at: string;
}
/** A message this page is sending (or failed to send). */
interface Outgoing {
  clientId: string;
  text: string;
  /** Files sent with it (kept in this page only). */
  files?: File[];
  state: "sending" | "sent" | "failed";
  error?: string;
  /** Failed because Familiar could not be reached (or was not sure it got it): sent again on reconnect. */
  resend?: boolean;
}

const NEAR_BOTTOM_PX = 80;
const BASE_TITLE = "Familiar"; // the tab's title without an unread count

/** Merges items by id: a known id is replaced where it stands (an edited card), new ones append. */
function merge(list: Item[], incoming: Item[], prepend = false): Item[] {
  const byId = new Map(incoming.map((i) => [i.id, i]));
  const kept = list.map((i) => byId.get(i.id) ?? i);
  const known = new Set(list.map((i) => i.id));
  const fresh = incoming.filter((i) => !known.has(i.id));
  return prepend ? [...fresh, ...kept] : [...kept, ...fresh];
}

/**
 * The web chat: the whole conversation from the server (both sides, every channel), older pages on
 * demand, live updates by long-polling (reconnecting within a second), retry for failed sends, a
 * "new messages" button when scrolled up, and — for a hidden tab — an unread count in the title and
 * a browser notification (once the person allowed them).
 */
export function Chat({ session }: { session: Session }) {
  const [items, setItems] = useState<Item[]>([]);
  const [before, setBefore] = useState<number | null>(null);
  // Drafts and unsent messages kept in this browser come back after a reload, with Retry.
  const [kept] = useState(() => loadDrafts(session.person.id));
  const [outgoing, setOutgoing] = useState<Outgoing[]>(() => kept.unsent.map((u) => ({ clientId: u.clientId, text: u.text, state: "failed", error: u.error, resend: true })));
  const outgoingNow = useRef(outgoing);
  outgoingNow.current = outgoing;
  /** Sends again what failed for want of a connection (the same client id: never said twice). */
  const resendFailed = useRef(() => {});
  const [typing, setTyping] = useState(false);
  const [connection, setConnection] = useState<"ok" | "lost">("ok");
  const [unseen, setUnseen] = useState(0);
  const [text, setText] = useState(kept.draft);
  const [files, setFiles] = useState<File[]>([]);
  const addFiles = (more: Iterable<File>) => setFiles((list) => [...list, ...more]);
  /** The largest file the server takes (MAX_ATTACHMENT_BYTES); larger ones are named, not uploaded. */
  const maxFileBytes = useRef<number | null>(null);
  const [composeError, setComposeError] = useState("");
  const box = useRef<HTMLTextAreaElement>(null);
  const [notice, setNotice] = useState("");
  const [permission, setPermission] = useState(typeof Notification === "undefined" ? "unsupported" : Notification.permission);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const unread = useRef(0);
  /** Texts of our own messages the log brought back (a sending bubble with such a text is done). */
  const logged = useRef(new Set<string>());
  const tz = session.person.timeZone;

  const nearBottom = () => {
    const el = scroller.current;
    return !el || el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  };
  const toBottom = () => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
    stick.current = true;
    setUnseen(0);
  };

  // First page, then live updates for as long as the page is open.
  useEffect(() => {
    let stopped = false;
    let cursor = 0;
    let typingShown = false;
    const onVisible = () => {
      if (!document.hidden) {
        unread.current = 0;
        document.title = BASE_TITLE;
      }
    };
    document.addEventListener("visibilitychange", onVisible);
    const arrived = (fresh: Item[]) => {
      const said = fresh.filter((i) => i.role === "assistant");
      if (said.length === 0 || !document.hidden) return;
      unread.current += said.length;
      document.title = `(${unread.current}) ${BASE_TITLE}`;
      if (typeof Notification !== "undefined" && Notification.permission === "granted") {
        const last = said[said.length - 1]!;
        new Notification("Familiar", { body: last.text.slice(0, 160), tag: last.id });
      }
    };
    void (async () => {
      for (;;) {
        try {
          const first = await api<{ items: Item[]; before: number | null; cursor: number; maxFileBytes: number | null }>("GET", "/api/web/chat?limit=30");
          if (stopped) return;
          maxFileBytes.current = first.maxFileBytes;
          setItems(first.items);
          setBefore(first.before);
          cursor = first.cursor;
          break;
        } catch {
          setConnection("lost");
          await new Promise((r) => setTimeout(r, 500));
          if (stopped) return;
        }
      }
      setConnection("ok");
      resendFailed.current();
      const seen = new Set<string>();
      // After a failure, ask without waiting, so "reconnected" shows as soon as the server answers.
      let recovering = false;
      while (!stopped) {
        try {
          const wait = recovering ? 0 : 25_000;
          const live: { items: Item[]; cursor: number; typing: boolean } = await api<{ items: Item[]; cursor: number; typing: boolean }>("GET", `/api/web/chat/live?after=${cursor}&wait=${wait}&typing=${typingShown ? 1 : 0}`);
          if (recovering) resendFailed.current();
          recovering = false;
          if (stopped) return;
          setConnection("ok");
          cursor = live.cursor;
          typingShown = live.typing;
          setTyping(live.typing);
          if (live.items.length > 0) {
            stick.current = nearBottom();
            const fresh = live.items.filter((i) => !seen.has(i.id));
            for (const i of live.items) seen.add(i.id);
            setItems((list) => merge(list, live.items));
            // Our own messages arrived in the log: the sending bubbles are done.
            const mine = live.items.filter((i) => i.role === "user").map((i) => i.text);
            for (const t of mine) logged.current.add(t);
            setOutgoing((list) => list.filter((o) => o.state === "failed" || !mine.some((t) => isLoggedAs(t, o.text, o.files ?? []))));
            if (!stick.current) setUnseen((n) => n + fresh.length);
            arrived(fresh);
          }
        } catch (err) {
          if (stopped) return;
          if (err instanceof ApiError && err.status === 401) return void location.assign("/");
          setConnection("lost");
          recovering = true;
          // Back within a second of the server: retry every half second while it is away.
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
    return () => {
      stopped = true;
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, []);

  useLayoutEffect(() => {
    if (stick.current) toBottom();
  }, [items, outgoing, typing]);

  // Keep the draft and everything not yet accepted by the server (see drafts.ts).
  useEffect(() => {
    const unsent = outgoing.filter((o) => o.state !== "sent").map((o) => ({ clientId: o.clientId, text: o.text, error: o.state === "failed" ? (o.error ?? "not sent") : "not confirmed before the page was closed" }));
    saveDrafts(session.person.id, { draft: text, unsent });
  }, [outgoing, text]);

  // The box grows with its text up to its CSS max-height, then scrolls.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight + el.offsetHeight - el.clientHeight}px`;
  }, [text]);

  const loadOlder = async () => {
    if (before === null) return;
    const el = scroller.current;
    const height = el?.scrollHeight ?? 0;
    const page = await api<{ items: Item[]; before: number | null }>("GET", `/api/web/chat?before=${before}&limit=30`);
    stick.current = false;
    setItems((list) => merge(list, page.items, true));
    setBefore(page.before);
    // Keep the reader's place while older messages appear above.
    requestAnimationFrame(() => {
      if (el) el.scrollTop += el.scrollHeight - height;
    });
  };

  const send = async (message: Outgoing) => {
    logged.current.delete(message.text);
    setOutgoing((list) => [...list.filter((o) => o.clientId !== message.clientId), { ...message, state: "sending" }]);
    stick.current = true;
    try {
      const answer = message.files?.length
        ? await sendWithFiles(message.text, message.clientId, message.files, maxFileBytes.current)
        : await api<{ notice: string | null }>("POST", "/api/web/chat", { text: message.text, clientMessageId: message.clientId });
      if (answer.notice) setNotice(answer.notice);
      // Accepted by the server (or recognised as already accepted): no longer kept in the browser.
      // Already back from the log (it is written before the answer): drop the bubble now.
      if (logged.current.has(message.text)) setOutgoing((list) => list.filter((o) => o.clientId !== message.clientId));
      else setOutgoing((list) => list.map((o) => (o.clientId === message.clientId ? { ...o, state: "sent" } : o)));
      // The log normally echoes it at once; drop the bubble anyway after a few seconds.
      setTimeout(() => setOutgoing((list) => list.filter((o) => o.clientId !== message.clientId || o.state !== "sent")), 5_000);
    } catch (err) {
      // Unreachable or a server error: sent again by itself on reconnect; a refusal (4xx) waits for Retry.
      const resend = !(err instanceof ApiError) || err.status === 0 || err.status >= 500;
      setOutgoing((list) => list.map((o) => (o.clientId === message.clientId ? { ...o, state: "failed", error: err instanceof ApiError ? err.message : "not sent", resend } : o)));
    }
  };
  resendFailed.current = () => outgoingNow.current.filter((o) => o.state === "failed" && o.resend).forEach((o) => void send(o));
  useEffect(() => box.current?.focus(), []);

  const press = async (item: Item, buttonId: string) => {
    try {
      const answer = await api<{ notice: string | null }>("POST", "/api/web/chat/press", { messageId: item.id, buttonId, clientActionId: newClientId() });
      setNotice(answer.notice ?? "");
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : "That did not work; try again.");
    }
  };

  return (
    <main
      class="chat"
      onDragOver={(e) => e.dataTransfer?.types.includes("Files") && e.preventDefault()}
      onDrop={(e) => {
        if (!e.dataTransfer?.files.length) return;
        e.preventDefault();
        addFiles(e.dataTransfer.files);
      }}
    >
      <div class="chat-tools">
        {connection === "lost" && <span role="status" class="warn">Reconnecting…</span>}
        {permission === "default" && (
          <button type="button" class="link" onClick={async () => setPermission(await Notification.requestPermission())}>
            Notify me of new messages
          </button>
        )}
      </div>
      <div class="scroller" ref={scroller} onScroll={() => nearBottom() && setUnseen(0)}>
        {before !== null && (
          <button type="button" class="older" onClick={() => void loadOlder()}>
            Load earlier messages
          </button>
        )}
        {items.length === 0 && outgoing.length === 0 && <p class="empty">Say hello — Familiar answers here, and everything you say on your messengers shows up too.</p>}
        <ol class="messages" role="log" aria-live="polite" aria-label="Conversation">
          {items.map((item) => (
            <li key={item.id} class={`msg ${item.role === "user" ? "me" : "them"}${item.card ? " approval" : ""}`} data-channel={item.channel}>
              {item.card ? (
                <div class="bubble">
                  <ApprovalCard card={item.card} />
                </div>
              ) : (
                item.text !== "" && <div class="bubble" dangerouslySetInnerHTML={{ __html: renderMarkdown(item.text) }} />
              )}
              {item.attachments && <Attachments files={item.attachments} />}
              {item.buttons.length > 0 && (
                <div class="card-buttons" role="group" aria-label="Answer">
                  {item.buttons.map((b) => (
                    <button key={b.id} type="button" class={item.card?.buttons.find((c) => c.id === b.id)?.style ?? ""} onClick={() => void press(item, b.id)}>
                      {b.label}
                    </button>
                  ))}
                </div>
              )}
              <span class="meta">
                <time dateTime={item.at} title={localTime(item.at, tz)}>{shortTime(item.at, tz)}</time>
                {item.channel !== "local" && ` · ${onChannel(item.channel)}`}
              </span>
            </li>
          ))}
          {outgoing.map((o) => (
            <PendingItem key={o.clientId} message={o} onRetry={() => void send(o)} />
          ))}
        </ol>
        {typing && (
          <p class="typing" role="status">
            Familiar is typing…
          </p>
        )}
      </div>
      {unseen > 0 && (
        <button type="button" class="unseen" onClick={toBottom}>
          {unseen} new message{unseen > 1 ? "s" : ""} ↓
        </button>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {composeError && (
        <p class="notice error" role="alert" id="compose-error">
          {composeError}
        </p>
      )}
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          const value = text.trim();
          if (!value && files.length === 0) return;
          // Over the limit: refused here with the limit in words; the text stays in the box.
          if (value.length > MESSAGE_TEXT_MAX) return void setComposeError(tooLongMessage(value.length));
          setComposeError("");
          setText("");
          setNotice("");
          setFiles([]);
          void send({ clientId: newClientId(), text: value, state: "sending", ...(files.length > 0 && { files }) });
          toBottom();
        }}
      >
        <ChosenFiles files={files} onRemove={(i) => setFiles((list) => list.filter((_, j) => j !== i))} />
        <AttachButton onFiles={addFiles} />
        <label for="text" class="visually-hidden">
          Message
        </label>
        <MessageBox
          text={text}
          box={box}
          onText={(value) => {
            setText(value);
            if (value.trim().length <= MESSAGE_TEXT_MAX) setComposeError("");
          }}
        />
      </form>
    </main>
  );
}

/** A message this page is sending, or failed to send (with Retry, and said when it goes again by itself). */
function PendingItem({ message: o, onRetry }: { message: Outgoing; onRetry: () => void }) {
  return (
    <li class="msg me pending">
      <div class="bubble plain">{[...(o.files ?? []).map((f) => `[${f.name}]`), o.text].filter((l) => l !== "").join("\n")}</div>
      {o.state === "failed" ? (
        <span class="meta error" role="alert">
          Not sent: {o.error}
          {o.resend ? " — sent again when Familiar is back." : ""}{" "}
          <button type="button" class="link" onClick={onRetry}>
            Retry
          </button>
        </span>
      ) : (
        <span class="meta">{o.state === "sending" ? "Sending…" : "Sent"}</span>
      )}
    </li>
  );
}

/** The message box (Enter sends, Shift+Enter a new line) with Send and, near the limit, the count. */
function MessageBox({ text, box, onText }: { text: string; box: RefObject<HTMLTextAreaElement>; onText: (value: string) => void }) {
  return (
    <>
      <textarea
        id="text"
        ref={box}
        rows={1}
        placeholder="Message Familiar…"
        aria-describedby={text.length >= MESSAGE_COUNTER_FROM ? "text-count" : undefined}
        value={text}
        onInput={(e) => onText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            e.currentTarget.form?.requestSubmit();
          }
        }}
      />
      <div class="send">
        <button type="submit">Send</button>
        {text.length >= MESSAGE_COUNTER_FROM && (
          <span id="text-count" class={`counter${text.trim().length > MESSAGE_TEXT_MAX ? " error" : ""}`} aria-live="polite">
            {formatCount(text.length)} / {formatCount(MESSAGE_TEXT_MAX)}
          </span>
        )}
      </div>
    </>
  );
}
