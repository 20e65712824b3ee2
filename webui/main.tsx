import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, navigate, setCsrf, type Session } from "./api.js";
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

function SignIn(props: { loopback: boolean; passwordSet: boolean; onDone: () => void }) {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  const [value, setValue] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (path: string, body: unknown) => {
    setBusy(true);
    setError("");
    try {
      await api("POST", path, body);
      history.replaceState(null, "", "/");
      props.onDone();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="center signin">
      <h1>Familiar</h1>
      <p class="intro">Your personal assistant in the messengers you already use — it remembers what matters to you, follows up on your goals, and asks before it acts for you.</p>
      {token ? (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/link", { token }))}>
          <p>You opened a one-time sign-in link.</p>
          <button type="submit" disabled={busy}>Sign in</button>
        </form>
      ) : props.loopback ? (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/local", { name: value.trim() }))}>
          <label for="name">Your name</label>
          <p class="hint" id="name-hint">On this machine, your name is enough: letters, digits, spaces and . _ @ - (up to 64).</p>
          <input id="name" aria-describedby="name-hint" autocomplete="username" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>Continue</button>
        </form>
      ) : (
        <form onSubmit={(e) => (e.preventDefault(), void submit("/api/web/session/password", { password: value }))}>
          <p>Send <code>/web</code> to Familiar on a messenger you linked: it answers with a one-time sign-in link.</p>
          {props.passwordSet && (
            <>
              <label for="password">Or the password set during setup</label>
              <input id="password" type="password" autocomplete="current-password" required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
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
