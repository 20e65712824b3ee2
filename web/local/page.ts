import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { RequestHandler } from "express";
import { cardCss, cardScript } from "./card-script.js";
import { pageScript } from "./page-script.js";

/**
 * The local chat page: static HTML, CSS and a vanilla script (no build step), plus two vendored,
 * well-kept libraries served straight from node_modules: `marked` (markdown → HTML) and `DOMPurify`
 * (sanitizes that HTML before it touches the DOM). The page and its assets are kept in TypeScript
 * modules so they ship with `tsc` output unchanged.
 */

const require = createRequire(import.meta.url);

/** Content-Security-Policy of the page: only our own scripts, styles and API; no remote images. */
const csp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Familiar — local chat</title>
<link rel="stylesheet" href="/local/app.css">
<script src="/local/marked.js" defer></script>
<script src="/local/purify.js" defer></script>
<script src="/local/card.js" defer></script>
<script src="/local/app.js" defer></script>
</head>
<body>
<div class="app">
  <header class="top">
    <h1>Familiar</h1>
    <form id="who" class="who" novalidate>
      <label for="name">Your name</label>
      <input id="name" name="name" autocomplete="username" maxlength="64" spellcheck="false"
        pattern="[A-Za-z0-9_.@\\-]{1,64}" aria-describedby="name-hint">
      <span id="name-hint" class="hint" role="status"></span>
    </form>
  </header>
  <main class="chat">
    <ol id="messages" class="messages" role="log" aria-live="polite" aria-relevant="additions text" aria-label="Conversation"></ol>
    <p id="empty" class="empty">Say hello — Familiar answers here.</p>
  </main>
  <div id="typing" class="typing" role="status" aria-live="polite" hidden>
    <span class="dots" aria-hidden="true"><i></i><i></i><i></i></span><span class="typing-text">Familiar is typing…</span>
  </div>
  <p id="status" class="status" role="status" aria-live="polite"></p>
  <form id="composer" class="composer">
    <label for="text" class="visually-hidden">Message</label>
    <textarea id="text" name="text" rows="1" placeholder="Message Familiar…" required></textarea>
    <button type="submit" id="send">Send</button>
  </form>
</div>
</body>
</html>
`;

const css = `:root{--bg:#f6f7f9;--panel:#fff;--text:#1c1f24;--muted:#667085;--line:#e3e6eb;--me:#2f6fed;--me-text:#fff;
--them:#fff;--accent:#2f6fed;--danger:#c0362c;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15171b;--panel:#1d2026;--text:#e7e9ee;--muted:#98a1b2;--line:#2c3038;
--me:#3b73e6;--them:#242830;--accent:#7aa2ff;--danger:#ff8a80}}
*{box-sizing:border-box}
[hidden]{display:none!important}
html,body{height:100%;margin:0}
body{background:var(--bg);color:var(--text);font-size:15px;line-height:1.45}
.app{display:flex;flex-direction:column;height:100%;max-width:760px;margin:0 auto;background:var(--panel);
border-left:1px solid var(--line);border-right:1px solid var(--line)}
.top{display:flex;align-items:center;justify-content:space-between;gap:12px;padding:12px 16px;border-bottom:1px solid var(--line)}
.top h1{font-size:18px;margin:0;font-weight:650;letter-spacing:.01em}
.who{display:flex;align-items:center;gap:8px;font-size:13px;color:var(--muted)}
.who input{width:9em;padding:5px 8px;border:1px solid var(--line);border-radius:8px;background:var(--bg);color:var(--text);font:inherit}
.who input[aria-invalid=true]{border-color:var(--danger)}
.hint{color:var(--danger);font-size:12px}
.chat{flex:1;overflow-y:auto;padding:16px;position:relative}
.messages{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:8px}
.empty{color:var(--muted);text-align:center;margin-top:30%}
.msg{max-width:80%;display:flex;flex-direction:column}
.msg.me{align-self:flex-end;align-items:flex-end}
.msg.them{align-self:flex-start;align-items:flex-start}
.bubble{padding:8px 12px;border-radius:16px;overflow-wrap:anywhere}
.me .bubble{background:var(--me);color:var(--me-text);border-bottom-right-radius:4px;white-space:pre-wrap}
.them .bubble{background:var(--them);border:1px solid var(--line);border-bottom-left-radius:4px}
.bubble>:first-child{margin-top:0}.bubble>:last-child{margin-bottom:0}
.bubble p{margin:.4em 0}.bubble ul,.bubble ol{margin:.4em 0;padding-left:1.4em}
.bubble pre{background:rgba(127,127,127,.12);padding:8px;border-radius:8px;overflow-x:auto}
.bubble code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.92em}
.bubble a{color:var(--accent)}
.bubble.plain{white-space:pre-wrap}
.meta{font-size:11px;color:var(--muted);margin:2px 6px 0}
.meta.error{color:var(--danger)}
.buttons{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}
.buttons button{font:inherit;font-size:13px;padding:5px 12px;border-radius:999px;border:1px solid var(--accent);
background:transparent;color:var(--accent);cursor:pointer}
.buttons button:hover:not(:disabled){background:var(--accent);color:var(--panel)}
.buttons button:disabled{opacity:.55;cursor:default}
.buttons button.chosen{background:var(--accent);color:var(--panel);opacity:1}
.typing{display:flex;align-items:center;gap:8px;padding:0 16px 6px;color:var(--muted);font-size:13px}
.dots{display:inline-flex;gap:3px}.dots i{width:6px;height:6px;border-radius:50%;background:var(--muted);
animation:blink 1.2s infinite ease-in-out}.dots i:nth-child(2){animation-delay:.2s}.dots i:nth-child(3){animation-delay:.4s}
@keyframes blink{0%,80%,100%{opacity:.25}40%{opacity:1}}
@media (prefers-reduced-motion:reduce){.dots i{animation:none;opacity:.6}}
.status{margin:0;padding:0 16px;font-size:12px;color:var(--danger);min-height:0}
.status.info{color:var(--muted)}
.status:empty{display:none}
.composer{display:flex;gap:8px;padding:12px 16px;border-top:1px solid var(--line)}
.composer textarea{flex:1;resize:none;overflow-y:hidden;max-height:160px;padding:9px 12px;border:1px solid var(--line);border-radius:12px;
background:var(--bg);color:var(--text);font:inherit}
.composer textarea:focus,.who input:focus,.buttons button:focus-visible,.composer button:focus-visible{outline:2px solid var(--accent);outline-offset:1px}
.composer button{font:inherit;font-weight:600;padding:0 18px;border:0;border-radius:12px;background:var(--me);color:var(--me-text);cursor:pointer}
.composer button:disabled{opacity:.5;cursor:default}
.visually-hidden{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
`;

interface Asset {
  type: string;
  body: () => string;
}

let markedSource: string | null = null;
let purifySource: string | null = null;

/** Reads a vendored library once; throws naming the package when it is not installed. */
function vendor(pkg: "marked" | "dompurify"): string {
  try {
    if (pkg === "marked") {
      markedSource ??= readFileSync(join(dirname(require.resolve("marked/package.json")), "lib", "marked.umd.js"), "utf8");
      return markedSource;
    }
    purifySource ??= readFileSync(require.resolve("dompurify/purify.min.js"), "utf8");
    return purifySource;
  } catch (err) {
    throw new Error(`local chat: the page needs the npm package "${pkg}"; run npm install`, { cause: err });
  }
}

const assets: Record<string, Asset> = {
  "index.html": { type: "text/html; charset=utf-8", body: () => html },
  "app.css": { type: "text/css; charset=utf-8", body: () => css + cardCss },
  "app.js": { type: "text/javascript; charset=utf-8", body: () => pageScript },
  "card.js": { type: "text/javascript; charset=utf-8", body: () => cardScript },
  "marked.js": { type: "text/javascript; charset=utf-8", body: () => vendor("marked") },
  "purify.js": { type: "text/javascript; charset=utf-8", body: () => vendor("dompurify") },
};

/**
 * Express handler serving one asset of the page by file name (`index.html`, `app.css`, `app.js`,
 * `marked.js`, `purify.js`); unknown names fall through to the next handler (404).
 */
export function servePage(name: string): RequestHandler {
  return (_req, res, next) => {
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) return next();
    res.set({
      "Content-Type": asset.type,
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Content-Security-Policy": csp,
    });
    res.send(asset.body());
  };
}
