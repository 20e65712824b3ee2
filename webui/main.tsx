import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, focusOnMount, navigate, setCsrf, type Session } from "./api.js";
import { Chat } from "./chat.js";
import { Dashboard } from "./dashboard.js";
import { Setup } from "./setup.js";

type NoSession = { signedIn: false; loopback: boolean; passwordSet: boolean };


function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const on = () => setPath(location.pathname);
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  return path;
}

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | NoSession | null>(null);
  const [error, setError] = useState("");

  const load = async () => {
    try {
      const s = await api<Session | NoSession>("GET", "/api/web/session");
      if (s.signedIn) setCsrf(s.csrf);
      setSession(s);
      if (s.signedIn && (path === "/" || path === "/signin")) {
        const setup = await api<{ model: { configured: boolean }; owner: boolean }>("GET", "/api/web/setup");
        navigate(!setup.model.configured && setup.owner ? "/setup" : "/chat");
      }
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  useEffect(() => void load(), []);

  if (error) return <main class="center"><p role="alert">{error}</p></main>;
  if (!session) return <main class="center"><p>Loading…</p></main>;
  if (!session.signedIn) return <SignIn loopback={session.loopback} passwordSet={session.passwordSet} onDone={() => void load()} />;

  const tab = path.startsWith("/dashboard") ? "dashboard" : path.startsWith("/setup") ? "setup" : "chat";
  const link = (to: string, label: string, active: boolean) => (
    <a href={to} aria-current={active ? "page" : undefined} onClick={(e) => (e.preventDefault(), navigate(to))}>
      {label}
    </a>
  );
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">Familiar</span>
        <nav aria-label="Main">
          {link("/chat", "Chat", tab === "chat")}
          {link("/dashboard/now", "Dashboard", tab === "dashboard")}
          {link("/setup", "Setup", tab === "setup")}
        </nav>
        <span class="who">
          {session.person.displayName}
          <button
            type="button"
            class="link"
            onClick={async () => {
              await api("POST", "/api/web/session/logout", {}).catch(() => undefined);
              location.href = "/";
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      {tab === "chat" && <Chat session={session} />}
      {tab === "dashboard" && <Dashboard session={session} tab={path.split("/")[2] ?? "now"} onPerson={(p) => setSession({ ...session, person: { ...session.person, ...p } })} />}
      {tab === "setup" && <Setup session={session} />}
    </div>
  );
}

type Confirm =
  | { confirm: "new"; name: string; firstPerson: boolean }
  | { confirm: "choose"; name: string; choices: { id: string; displayName: string; since: string }[] };
type LocalAnswer = { signedIn: true } | ({ signedIn: false } & Confirm);

/** The browser's IANA time zone ("Europe/Berlin"), or "" when it does not say. */
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone ?? "";
  } catch {
    return "";
  }
}

/** A name never seen here: start as a new person (in the browser's zone, proposed), or go back. */
function NewPerson(props: { confirm: Extract<Confirm, { confirm: "new" }>; busy: boolean; zone: string; setZone: (zone: string) => void; onBack: () => void; onSubmit: () => void }) {
  const { confirm } = props;
  return (
    <form onSubmit={(e) => (e.preventDefault(), props.onSubmit())}>
      <p>
        {confirm.firstPerson ? "Familiar has not met anyone yet." : "No one called "}
        {!confirm.firstPerson && <strong>{confirm.name}</strong>}
        {!confirm.firstPerson && " has used this Familiar yet."} Start as a new person named <strong>{confirm.name}</strong>?
      </p>
      <label for="zone">Your time zone</label>
      <p class="hint" id="zone-hint">{browserZone() ? "Proposed from this browser; " : ""}used for reminders, quiet hours and digests. A city such as Lisbon works too.</p>
      <input id="zone" aria-describedby="zone-hint" required value={props.zone} onInput={(e) => props.setZone(e.currentTarget.value)} />
      <div class="row">
        <button type="submit" disabled={props.busy} ref={focusOnMount}>Start as {confirm.name}</button>
        <button type="button" class="secondary" onClick={props.onBack}>Back: I have used Familiar before</button>
      </div>
    </form>
  );
}

function SignIn(props: { loopback: boolean; passwordSet: boolean; onDone: () => void }) {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const [value, setValue] = useState("");
  const [zone, setZone] = useState(browserZone());
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (path: string, body: unknown) => {
    setBusy(true);
    setError("");
    try {
      const answer = await api<LocalAnswer>("POST", path, body);
      if (!answer.signedIn) return setConfirm(answer);
      history.replaceState(null, "", "/");
      props.onDone();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const back = () => (setConfirm(null), setError(""));
  return (
    <main class="center signin">
      <h1>Familiar</h1>
      <p class="intro">Your personal assistant in the messengers you already use — it remembers what matters to you, follows up on your goals, and asks before it acts for you.</p>
      {token ? (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/link", { token }))}>
          <p>You opened a one-time sign-in link.</p>
          <button type="submit" disabled={busy} ref={focusOnMount}>Sign in</button>
        </form>
      ) : confirm?.confirm === "new" ? (
        <NewPerson confirm={confirm} busy={busy} zone={zone} setZone={setZone} onBack={back} onSubmit={() => void submit("/api/web/session/local", { name: confirm.name, create: true, ...(zone.trim() && { timeZone: zone.trim() }) })} />
      ) : confirm?.confirm === "choose" ? (
        <div>
          <p>More than one person here answers to <strong>{confirm.name}</strong>. Which one are you?</p>
          <div class="row">
            {confirm.choices.map((c) => (
              <button type="button" key={c.id} disabled={busy} onClick={() => void submit("/api/web/session/local", { name: confirm.name, personId: c.id })}>
                {c.displayName} (since {new Date(c.since).toLocaleDateString()})
              </button>
            ))}
            <button type="button" class="secondary" onClick={back}>Back</button>
          </div>
        </div>
      ) : props.loopback ? (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/local", { name: value.trim() }))}>
          <label for="name">Your name</label>
          <p class="hint" id="name-hint">On this machine, your name is enough: letters, digits, spaces and . _ @ - (up to 64). Capitals, accents and spaces around it do not matter.</p>
          <input id="name" aria-describedby="name-hint" autocomplete="username" required ref={focusOnMount} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>Continue</button>
        </form>
      ) : (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/password", { password: value }))}>
          <p>Send <code>/web</code> to Familiar on a messenger you linked: it answers with a one-time sign-in link.</p>
          {props.passwordSet && (
            <>
              <label for="password">Or the password set during setup</label>
              <input id="password" type="password" autocomplete="current-password" required ref={focusOnMount} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
              <button type="submit" disabled={busy}>Sign in</button>
            </>
          )}
        </form>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </main>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
