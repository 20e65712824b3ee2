import { useEffect, useState } from "preact/hooks";
import { api, navigate, shortTime } from "./api.js";

/** The *Now* tab (GET /api/web/now): what runs, what is next, what waits on the person, deliveries in words. */

/** The person's model use today (GET /api/web/now `modelUse`). */
interface ModelUse {
  used: number;
  limit: number | null;
  exhausted: boolean;
}

interface DeliveryJson { id: string; state: "waiting" | "failed"; words: string; at: string | null }
type NowState = {
  status: string;
  pendingApprovals: number;
  paused: boolean;
  modelUse?: ModelUse;
  running: string[];
  next: { at: string; words: string }[];
  watching: string[];
  waitingOnYou: { id: string; words: string; expiresAt: string }[];
  deliveries: { waiting: DeliveryJson[]; failed: DeliveryJson[] };
};

function modelUseText(use: ModelUse): string {
  const used = use.used.toLocaleString("en-US");
  if (use.limit === null) return `Model use today: ${used} tokens (no daily budget set).`;
  const of = `Model use today: ${used} of ${use.limit.toLocaleString("en-US")} tokens`;
  return use.exhausted ? `${of} — today's budget is used; I go on at 00:00 your time.` : `${of}.`;
}

/** What runs now, what comes next (with times), what waits on the person, and deliveries that wait or failed. */
export function Now({ tz }: { tz: string }) {
  const [now, setNow] = useState<NowState | null>(null);
  useEffect(() => {
    const load = () => void api<NowState>("GET", "/api/web/now").then(setNow, () => undefined);
    load();
    const timer = setInterval(load, 5_000);
    return () => clearInterval(timer);
  }, []);
  if (!now) return <p>Loading…</p>;
  const go = (path: string) => (e: Event) => (e.preventDefault(), navigate(path));
  return (
    <div class="now">
      <h2>Now</h2>
      <p class="status-line" role="status">{now.running[0] ?? now.status}</p>
      {now.paused && <p class="warn">Background work is paused (send /resume to continue).</p>}
      {now.waitingOnYou.length > 0 && (
        <section aria-label="Waiting for you">
          <h3>Waiting for you</h3>
          <ul>
            {now.waitingOnYou.map((a) => <li key={a.id}><a href="/dashboard/approvals" onClick={go("/dashboard/approvals")}>{a.words}</a> <span class="meta">(asks until {shortTime(a.expiresAt, tz)})</span></li>)}
          </ul>
        </section>
      )}
      {(now.deliveries.waiting.length > 0 || now.deliveries.failed.length > 0) && (
        <section aria-label="Deliveries">
          <h3>Messages that did not reach you yet</h3>
          <ul>
            {[...now.deliveries.waiting, ...now.deliveries.failed].map((d) => <li key={d.id} class={d.state === "failed" ? "problem" : "warn"}>{d.words}</li>)}
          </ul>
        </section>
      )}
      <section aria-label="Next">
        <h3>Next</h3>
        {now.next.length === 0 ? (
          <p class="meta">Nothing is scheduled. Ask for a reminder or a goal with check-ins and it shows here.</p>
        ) : (
          <ul>
            {now.next.map((n, i) => <li key={i}><time dateTime={n.at}>{shortTime(n.at, tz)}</time> {n.words}</li>)}
          </ul>
        )}
      </section>
      {now.watching.length > 0 && (
        <section aria-label="Watching">
          <h3>Watching</h3>
          <ul>{now.watching.map((w, i) => <li key={i}>{w}</li>)}</ul>
        </section>
      )}
      {now.modelUse && <p class={now.modelUse.exhausted ? "warn model-use" : "meta model-use"}>{modelUseText(now.modelUse)}</p>}
    </div>
  );
}

