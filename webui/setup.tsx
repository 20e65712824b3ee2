import { useEffect, useState } from "preact/hooks";
import { ApiError, api, navigate, type Session } from "./api.js";

interface SetupJson {
  owner: boolean;
  model: { configured: boolean; source: "environment" | "setup" | "none"; envVars: string[]; name: string | null; provider: string | null; baseURL: string | null; hasKey: boolean | null };
  /** The model also judges proactive messages (NOTIFY_MODEL_JUDGEMENT). */
  notificationJudgement: boolean;
  passwordSet: boolean;
  messengers: { channel: string; needs: string[]; readme: string; state: string; fromEnvironment: boolean; restartNote: string; bot: BotAccount | null; yourAccounts: string[] }[];
  whatsapp: { state: string; qr: string | null } | null;
  computer: { state: "checking" | "on" | "off"; reason: string | null; languages: string[] };
  devices: { allowRemote: boolean; listensBeyondLoopback: boolean; network: string | null; publicUrlSet: boolean; https: boolean };
}

/** Familiar's own account on a messenger (name, @handle, a link that opens the chat). */
interface BotAccount {
  name: string;
  handle: string | null;
  url: string | null;
}

const title = (channel: string) => channel[0]!.toUpperCase() + channel.slice(1);

const providerInfo = {
  openai: { label: "OpenAI", base: "https://api.openai.com/v1", key: "required", hint: "An API key from platform.openai.com → API keys." },
  compatible: { label: "OpenAI-compatible server", base: "", key: "optional", hint: "llama.cpp, vLLM, LM Studio…: the server's URL ending in /v1, e.g. http://127.0.0.1:8080/v1." },
  ollama: { label: "Ollama", base: "http://127.0.0.1:11434/v1", key: "none", hint: "Ollama on this machine; start it with `ollama serve` and pull a model first." },
} as const;
type Provider = keyof typeof providerInfo;
const isProvider = (p: string | null): p is Provider => p !== null && p in providerInfo;

/** First-run setup: the model (tested before it is kept), the remote password, the messengers. */
export function Setup({ session }: { session: Session }) {
  const [setup, setSetup] = useState<SetupJson | null>(null);
  const load = () => void api<SetupJson>("GET", "/api/web/setup").then(setSetup, () => undefined);
  useEffect(() => {
    load();
    // WhatsApp's QR rotates while pairing: refresh it.
    const timer = setInterval(() => setup?.whatsapp?.qr && load(), 5_000);
    return () => clearInterval(timer);
  }, [setup?.whatsapp?.qr]);
  if (!setup) return <main class="setup"><p>Loading…</p></main>;
  return (
    <main class="setup">
      <h1>Set up Familiar</h1>
      {setup.model.configured && (
        <p class="start">
          <a href="/chat" onClick={(e) => (e.preventDefault(), navigate("/chat"))}>
            Start chatting →
          </a>{" "}
          <span class="hint">Everything below can be changed later.</span>
        </p>
      )}
      {!setup.owner && <p class="warn">Only the owner of this Familiar can change its setup.</p>}
      <ModelSection setup={setup} onSaved={load} />
      <JudgeNote on={setup.notificationJudgement} />
      {setup.owner && <PasswordSection set={setup.passwordSet} loopback={session.loopback} devices={setup.devices} />}
      <section aria-labelledby="computer-h">
        <h2 id="computer-h">Computer</h2>
        {setup.computer.state === "on" ? (
          <p class="ok">✓ On: Familiar runs {setup.computer.languages.map((l) => ({ python: "Python", javascript: "JavaScript", shell: "shell" })[l] ?? l).join(", ")} in a sandbox with no network and only your workspace.</p>
        ) : setup.computer.state === "checking" ? (
          <p class="meta">Checking whether sandboxes run here…</p>
        ) : (
          <p class="error">✗ Off: {setup.computer.reason}</p>
        )}
        <p class="hint">
          <a href="/readme#computer">README: Computer</a> (what runs where, the limits, how to turn it off).
        </p>
      </section>
      <section aria-labelledby="messengers-h">
        <h2 id="messengers-h">Messengers</h2>
        <p class="hint">
          Enter a messenger's token here and Familiar checks it and starts the messenger at once — no restart. The web chat works without any messenger. Settings in the environment win over this page.
        </p>
        <ul class="cards">
          {setup.messengers.map((m) => (
            <li key={m.channel} class="card">
              <h3>{m.channel[0]!.toUpperCase() + m.channel.slice(1)}</h3>
              <p>Needs: {m.needs.map((n, i) => <><code>{n}</code>{i < m.needs.length - 1 ? ", " : ""}</>)} · <a href={m.readme}>README section</a></p>
              <p class={m.state === "running" ? "ok" : m.state.startsWith("failed") ? "error" : "meta"}>
                {m.state === "running" ? `✓ Running${m.bot ? ` as ${m.bot.name}${m.bot.handle && m.bot.handle !== m.bot.name ? ` (${m.bot.handle})` : ""}` : ""}.` : m.state.startsWith("failed") ? `✗ ${m.state}` : "Not configured."}
              </p>
              {m.state === "running" && <OwnAccount channel={m.channel} bot={m.bot} yours={m.yourAccounts} onLinked={load} />}
              {m.channel === "whatsapp" && setup.whatsapp?.qr && (
                <>
                  <p>On your phone: WhatsApp → Linked devices → Link a device, then scan:</p>
                  <pre class="qr" aria-label="WhatsApp pairing QR code">{setup.whatsapp.qr}</pre>
                </>
              )}
              {m.channel === "whatsapp" && setup.whatsapp && !setup.whatsapp.qr && <p class="meta">WhatsApp: {setup.whatsapp.state}</p>}
              {m.fromEnvironment ? (
                <p class="hint">Set by environment variables; change them there and restart.</p>
              ) : (
                setup.owner && <MessengerForm channel={m.channel} note={m.restartNote} onDone={load} />
              )}
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}

/** What the model does for proactive messages (README, "Proactive messages"). */
function JudgeNote({ on }: { on: boolean }) {
  return on ? (
    <p class="hint">
      With a model, Familiar also asks it whether each message it wants to send you on its own — a check-in's news, a watched price or parcel — is worth sending now. The model can only make
      Familiar quieter: it may hold or drop a message, never send one the rules hold or drop, and if it fails the message is held for your digest. Reminders you asked for, approvals and
      critical alerts are never second-guessed. <code>NOTIFY_MODEL_JUDGEMENT=false</code> leaves it to the rules alone.
    </p>
  ) : (
    <p class="hint">
      The model does not judge proactive messages (<code>NOTIFY_MODEL_JUDGEMENT=false</code>): the rules alone decide what Familiar sends you on its own.
    </p>
  );
}

function ModelSection({ setup, onSaved }: { setup: SetupJson; onSaved: () => void }) {
  // Coming back: the choice in use is shown (its provider and server; a stored key is kept unless a new one is typed).
  const inUse = setup.model.source === "setup" && isProvider(setup.model.provider) ? setup.model.provider : null;
  const [provider, setProvider] = useState<Provider>(inUse ?? "openai");
  const [baseURL, setBaseURL] = useState(inUse ? (setup.model.baseURL ?? "") : "");
  const [apiKey, setApiKey] = useState("");
  const [models, setModels] = useState<string[] | null>(null);
  const [model, setModel] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [done, setDone] = useState("");
  const info = providerInfo[provider];
  const keyKept = inUse === provider && setup.model.hasKey === true && baseURL.trim().replace(/\/+$/, "") === (setup.model.baseURL ?? "");
  const connection = () => ({ provider, ...(baseURL.trim() && { baseURL: baseURL.trim() }), ...(apiKey.trim() && { apiKey: apiKey.trim() }) });

  if (setup.model.source === "environment") {
    return (
      <section aria-labelledby="model-h">
        <h2 id="model-h">Model</h2>
        <p class="ok">✓ Using <strong>{setup.model.name}</strong> at {setup.model.baseURL}.</p>
        <p class="hint">Set by the environment variables {setup.model.envVars.map((v) => <code key={v}>{v} </code>)}— they win over this page. To choose here instead, unset them and restart.</p>
      </section>
    );
  }
  const test = async () => {
    setBusy(true);
    setError("");
    setModels(null);
    try {
      const r = await api<{ models: string[]; baseURL: string }>("POST", "/api/web/setup/models", connection());
      setModels(r.models);
      setModel(r.models[0] ?? "");
      if (r.models.length === 0) setError("The server lists no models. Pull or load one, then test again.");
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const use = async () => {
    setBusy(true);
    setError("");
    try {
      const r = await api<{ model: string; reply: string }>("POST", "/api/web/setup/model", { ...connection(), model });
      setDone(`Familiar now uses ${r.model}. Its test answer: “${r.reply}”. No restart needed.`);
      onSaved();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="model-h">
      <h2 id="model-h">Model</h2>
      {setup.model.configured ? (
        <p class="ok">
          ✓ Using <strong>{setup.model.name}</strong>
          {inUse ? ` via ${providerInfo[inUse].label}` : ""} at {setup.model.baseURL}
          {setup.model.hasKey ? ", with an API key stored" : ""}. Choose again below to change it.
        </p>
      ) : (
        <p>Familiar needs a language model. Choose where it runs:</p>
      )}
      {setup.owner && (
        <form onSubmit={(e) => (e.preventDefault(), void (models ? use() : test()))}>
          <fieldset>
            <legend>Provider</legend>
            {(Object.keys(providerInfo) as Provider[]).map((p) => (
              <label key={p} class="inline">
                <input type="radio" name="provider" value={p} checked={provider === p} onChange={() => (setProvider(p), setBaseURL(providerInfo[p].base), setModels(null))} /> {providerInfo[p].label}
              </label>
            ))}
          </fieldset>
          <p class="hint">{info.hint}</p>
          {provider !== "openai" && (
            <>
              <label for="base-url">Server URL</label>
              <input id="base-url" type="url" required={provider === "compatible"} placeholder={info.base || "http://127.0.0.1:8080/v1"} value={baseURL} onInput={(e) => (setBaseURL(e.currentTarget.value), setModels(null))} />
            </>
          )}
          {info.key !== "none" && (
            <>
              <label for="api-key">API key{info.key === "optional" ? " (if the server wants one)" : ""}</label>
              <input id="api-key" type="password" autocomplete="off" required={info.key === "required" && !keyKept} placeholder={keyKept ? "A key is stored — leave empty to keep it" : ""} value={apiKey} onInput={(e) => (setApiKey(e.currentTarget.value), setModels(null))} />
              <p class="hint">{keyKept ? "The stored key is used unless you type a new one. " : ""}Kept encrypted in Familiar's vault; never shown again.</p>
            </>
          )}
          {models && models.length > 0 && (
            <>
              <label for="model">Model</label>
              <select id="model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                {models.map((m) => <option key={m} value={m}>{m}</option>)}
              </select>
            </>
          )}
          <div class="actions">
            {!models ? (
              <button type="submit" disabled={busy}>{busy ? "Testing…" : "Test connection"}</button>
            ) : (
              <>
                <button type="submit" disabled={busy || !model}>{busy ? "Trying the model…" : "Use this model"}</button>
                <button type="button" onClick={() => setModels(null)}>Back</button>
              </>
            )}
          </div>
          {error && <p role="alert" class="error">{error}</p>}
          {done && <p role="status" class="ok">{done}</p>}
        </form>
      )}
    </section>
  );
}

/** Exactly what a phone needs to open this Familiar, for the way it was started. */
function PhoneSteps({ devices }: { devices: SetupJson["devices"] }) {
  if (!devices.allowRemote) {
    return (
      <ol class="steps">
        <li>
          Right now only this machine can open Familiar. Stop it (Ctrl-C) and start it again with <code>LOCAL_CHAT_ALLOW_REMOTE=true npm start</code> — this one is a setting of the environment only. Familiar then listens on your network too.
        </li>
        <li>On your phone, connected to the same Wi-Fi, open the address the console prints (this machine's network address and port).</li>
        <li>Sign in there with the password below, or send <code>/web</code> to Familiar on a linked messenger for a one-time link.</li>
      </ol>
    );
  }
  if (!devices.listensBeyondLoopback) {
    return <p class="warn">Other devices may sign in, but Familiar listens on this machine only because <code>HOST</code> is set to a loopback address. Unset <code>HOST</code> (or set it to <code>0.0.0.0</code>) and restart.</p>;
  }
  return (
    <ol class="steps">
      <li>
        On your phone, {devices.publicUrlSet ? "" : "connected to the same Wi-Fi as this machine, "}open{" "}
        {devices.network ? <a href={devices.network}>{devices.network}</a> : "this machine's network address"}.
      </li>
      <li>Sign in there with the password below, or send <code>/web</code> to Familiar on a linked messenger for a one-time link (valid 15 minutes).</li>
      {!devices.https && <li>Beyond your home network, put HTTPS in front of Familiar (a reverse proxy) and set <code>PUBLIC_URL</code> to its address: sign-in over plain HTTP can be read on the way.</li>}
    </ol>
  );
}

function PasswordSection({ set, loopback, devices }: { set: boolean; loopback: boolean; devices: SetupJson["devices"] }) {
  const [password, setPassword] = useState("");
  const [msg, setMsg] = useState("");
  return (
    <section aria-labelledby="pw-h">
      <h2 id="pw-h">Your phone and other devices</h2>
      <PhoneSteps devices={devices} />
      <p class="hint">
        {loopback ? "This machine needs no sign-in. " : ""}
        {set ? "A password is set." : "No password is set yet."}
      </p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await api("POST", "/api/web/setup/password", { password });
            setPassword("");
            setMsg("Password saved.");
          } catch (err) {
            setMsg(err instanceof ApiError ? err.message : String(err));
          }
        }}
      >
        <label for="new-password">{set ? "New password" : "Password"} (at least 10 characters)</label>
        <input id="new-password" type="password" autocomplete="new-password" minLength={10} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit">Save password</button>
        {msg && <p role="status">{msg}</p>}
      </form>
    </section>
  );
}

/**
 * Connecting the signed-in person's own account on a running messenger: a /link code to send to the
 * bot from that account (Telegram: a t.me link that sends it), which joins it to this conversation —
 * no pairing, no second person. Polls until the account shows up.
 */
function OwnAccount({ channel, bot, yours, onLinked }: { channel: string; bot: BotAccount | null; yours: string[]; onLinked: () => void }) {
  const [code, setCode] = useState<{ code: string; openUrl: string | null; expiresInMinutes: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!code || yours.length > 0) return;
    const timer = setInterval(onLinked, 3_000);
    return () => clearInterval(timer);
  }, [code, yours.length]);
  const who = bot ? (bot.handle ?? bot.name) : `Familiar on ${title(channel)}`;
  if (yours.length > 0) return <p class="ok">✓ Your {title(channel)} account is connected: talking to {who} there continues this same conversation.</p>;
  const ask = async () => {
    setError(null);
    try {
      setCode(await api("POST", `/api/web/setup/messengers/${channel}/code`, {}));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <div class="own-account">
      {code ? (
        <>
          <p>
            From your own {title(channel)} account, send {bot?.url && channel !== "telegram" ? <a href={bot.url} target="_blank" rel="noopener noreferrer">{who}</a> : who} this code within {code.expiresInMinutes} minutes: <strong class="code">{code.code}</strong>
          </p>
          {code.openUrl && (
            <p>
              <a class="button" href={code.openUrl} target="_blank" rel="noopener noreferrer">Open {who} in Telegram</a> <span class="hint">(press Start there; the code goes by itself)</span>
            </p>
          )}
          <p class="meta" role="status">Waiting for your message…</p>
        </>
      ) : (
        <button type="button" onClick={() => void ask()}>Connect my own {title(channel)} account</button>
      )}
      <p class="hint">Your {title(channel)} account joins the conversation you are signed in to: same memory, same goals. Others who write to {who} ask you first.</p>
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  );
}

const messengerFields: Record<string, { name: string; label: string; required: boolean; secret: boolean }[]> = {
  telegram: [{ name: "token", label: "Bot token (from @BotFather)", required: true, secret: true }],
  discord: [{ name: "token", label: "Bot token", required: true, secret: true }],
  slack: [
    { name: "botToken", label: "Bot token (xoxb-…)", required: true, secret: true },
    { name: "appToken", label: "App-level token for Socket Mode (xapp-…)", required: false, secret: true },
    { name: "signingSecret", label: "Or the signing secret (HTTP events)", required: false, secret: true },
  ],
  whatsapp: [],
};

function MessengerForm({ channel, note, onDone }: { channel: string; note: string; onDone: () => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const fields = messengerFields[channel] ?? [];
  const submit = async () => {
    setBusy(true);
    setMsg(null);
    const body: Record<string, unknown> = channel === "whatsapp" ? { enabled: true } : Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim()));
    try {
      await api("POST", `/api/web/setup/messengers/${channel}`, body);
      setMsg({ ok: true, text: "✓ Accepted and running — no restart needed." });
      setValues({});
      onDone();
    } catch (err) {
      setMsg({ ok: false, text: err instanceof ApiError ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => (e.preventDefault(), void submit())}>
      {fields.map((f) => (
        <div key={f.name}>
          <label for={`${channel}-${f.name}`}>{f.label}</label>
          <input id={`${channel}-${f.name}`} type={f.secret ? "password" : "text"} autocomplete="off" required={f.required} value={values[f.name] ?? ""} onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })} />
        </div>
      ))}
      <p class="hint">{note}</p>
      <button type="submit" disabled={busy}>{busy ? "Checking…" : channel === "whatsapp" ? "Enable WhatsApp" : `Check and start ${channel[0]!.toUpperCase() + channel.slice(1)}`}</button>
      {msg && <p role={msg.ok ? "status" : "alert"} class={msg.ok ? "ok" : "error"}>{msg.text}</p>}
    </form>
  );
}
