import { useEffect, useState } from "preact/hooks";
import { ApiError, api } from "./api.js";

interface SettingsJson {
  displayName: string;
  timeZone: string;
  proactivity: string;
  quietHours: { from: string; to: string } | null;
  digestTime: string | null;
  personaName: string | null;
  personaStyle: string | null;
  reach: Reach;
}

/** Where Familiar reaches the person with messages it starts itself (server: ReachPreference). */
type Reach = { mode: "last" } | { mode: "messenger"; channel: string } | { mode: "all" };

const channelWords: Record<string, string> = { local: "the web chat", telegram: "Telegram", slack: "Slack", discord: "Discord", whatsapp: "WhatsApp" };

/** The select's value for a reach preference: `last`, `all` or the channel name. */
const reachValue = (r: Reach): string => (r.mode === "messenger" ? r.channel : r.mode);
const reachOf = (value: string): Reach => (value === "last" || value === "all" ? { mode: value } : { mode: "messenger", channel: value });

const zones: string[] = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];

/** The person's settings; saved ones apply to the next model request and the next notification. */
export function Settings({ onSaved }: { onSaved: (s: { displayName: string; timeZone: string }) => void }) {
  const [s, setS] = useState<SettingsJson | null>(null);
  const [quiet, setQuiet] = useState(false);
  const [notice, setNotice] = useState("");
  const [error, setError] = useState("");
  useEffect(() => {
    void api<SettingsJson>("GET", "/api/web/settings").then((v) => {
      setS(v);
      setQuiet(v.quietHours !== null);
    });
  }, []);
  if (!s) return <p>Loading…</p>;
  const set = (patch: Partial<SettingsJson>) => setS({ ...s, ...patch });
  const save = async () => {
    setError("");
    setNotice("");
    try {
      const saved = await api<SettingsJson>("PATCH", "/api/web/settings", {
        displayName: s.displayName,
        timeZone: s.timeZone,
        proactivity: s.proactivity,
        quietHours: quiet ? (s.quietHours ?? { from: "22:00", to: "07:00" }) : null,
        digestTime: s.digestTime || null,
        personaName: s.personaName ?? "",
        personaStyle: s.personaStyle ?? "",
        reach: s.reach,
      });
      setS(saved);
      onSaved(saved);
      setNotice("Saved. Familiar uses these from its next message.");
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <form class="settings" onSubmit={(e) => (e.preventDefault(), void save())}>
      <h2>Settings</h2>
      <label for="s-name">Your name</label>
      <input id="s-name" value={s.displayName} onInput={(e) => set({ displayName: e.currentTarget.value })} />
      <label for="s-tz">Time zone</label>
      <p class="hint" id="s-tz-hint">Type a city (Berlin, New York) or a zone (Europe/Berlin); the list narrows as you type.</p>
      <input id="s-tz" list="zones" autocomplete="off" aria-describedby="s-tz-hint" value={s.timeZone} onInput={(e) => set({ timeZone: e.currentTarget.value })} />
      <datalist id="zones">{zones.map((z) => <option key={z} value={z} />)}</datalist>
      <label for="s-pro">How readily Familiar messages first</label>
      <select id="s-pro" value={s.proactivity} onChange={(e) => set({ proactivity: e.currentTarget.value })}>
        <option value="off">off — only when you asked for it</option>
        <option value="low">low</option>
        <option value="normal">normal</option>
        <option value="high">high</option>
      </select>
      <ReachChoice reach={s.reach} onChange={(reach) => set({ reach })} />
      <fieldset>
        <legend>Quiet hours</legend>
        <label class="inline">
          <input type="checkbox" checked={quiet} onChange={(e) => setQuiet(e.currentTarget.checked)} /> Hold messages during quiet hours
        </label>
        {quiet && (
          <div class="row">
            <label>
              from <input type="time" value={s.quietHours?.from ?? "22:00"} onInput={(e) => set({ quietHours: { from: e.currentTarget.value, to: s.quietHours?.to ?? "07:00" } })} />
            </label>
            <label>
              to <input type="time" value={s.quietHours?.to ?? "07:00"} onInput={(e) => set({ quietHours: { from: s.quietHours?.from ?? "22:00", to: e.currentTarget.value } })} />
            </label>
          </div>
        )}
      </fieldset>
      <label for="s-digest">Digest of held messages at (empty: when held messages are released)</label>
      <input id="s-digest" type="time" value={s.digestTime ?? ""} onInput={(e) => set({ digestTime: e.currentTarget.value })} />
      <label for="s-persona">Familiar's name</label>
      <input id="s-persona" placeholder="Familiar" value={s.personaName ?? ""} onInput={(e) => set({ personaName: e.currentTarget.value })} />
      <label for="s-style">How Familiar should write to you</label>
      <textarea id="s-style" placeholder="e.g. short and dry, no emoji" value={s.personaStyle ?? ""} onInput={(e) => set({ personaStyle: e.currentTarget.value })} />
      <button type="submit">Save settings</button>
      {notice && <p role="status" class="notice">{notice}</p>}
      {error && <p role="alert" class="error">{error}</p>}
    </form>
  );
}

/** "Where Familiar reaches you": the chat last used (default), one linked messenger, or all chats. */
function ReachChoice({ reach, onChange }: { reach: Reach; onChange: (reach: Reach) => void }) {
  const [linked, setLinked] = useState<string[]>([]);
  useEffect(() => {
    void api<{ items: { channel: string }[] }>("GET", "/api/web/messengers").then((m) => setLinked([...new Set(m.items.map((i) => i.channel))]));
  }, []);
  const channels = [...new Set([...linked, ...(reach.mode === "messenger" ? [reach.channel] : [])])];
  return (
    <>
      <label for="s-reach">Where Familiar reaches you (reminders, check-ins and other messages it starts itself)</label>
      <p class="hint" id="s-reach-hint">Answers always come in the chat you wrote from.</p>
      <select id="s-reach" aria-describedby="s-reach-hint" value={reachValue(reach)} onChange={(e) => onChange(reachOf(e.currentTarget.value))}>
        <option value="last">The chat I last used (the web chat only while it is open, else my last messenger)</option>
        {channels.map((c) => (
          <option key={c} value={c}>
            Always {channelWords[c] ?? c}
          </option>
        ))}
        <option value="all">All my chats</option>
      </select>
    </>
  );
}
