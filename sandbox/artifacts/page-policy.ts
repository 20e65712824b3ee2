/**
 * How an agent-made web page is shown so that it runs but can never reach out nor read the app.
 *
 * 1. **A sandboxed frame.** The page's own URL serves a small frame page of the app holding the
 *    artifact in `<iframe sandbox="allow-scripts">`: no `allow-same-origin` (an opaque origin: no
 *    cookies, storage, or access to the app's DOM and session), no `allow-top-navigation*`,
 *    `allow-popups`, `allow-forms`, `allow-modals` or `allow-downloads`. The frame page allows
 *    frames from the app only (`frame-src 'self'`), which binds every later navigation of the
 *    frame too: a page that navigates itself elsewhere gets an error page, never the destination.
 * 2. **The page's own policy** (response headers): `default-src 'none'`, inline script and style
 *    only, `img-src data: blob:`, `connect-src 'none'`, `form-action 'none'`, no frames, workers
 *    or base URL, the CSP `sandbox` directive (sandboxed even when opened on its own), Trusted
 *    Types required (every HTML string goes through the guard's policy), no sniffing, no referrer,
 *    no caching, no DNS prefetching, every device and sensor off.
 * 3. **What no policy covers in Chromium**, closed in the markup before it is served and by a
 *    guard script put first in the document: WebRTC (`RTCPeerConnection` reaches any host over UDP
 *    or TCP — TURN carries data — whatever the CSP says), child frames (an `about:blank` or
 *    `srcdoc` frame is a fresh window with WebRTC again, and CSP does not stop it), resource hints
 *    (`<link rel=preconnect|dns-prefetch|…>`, which browsers may act on before any policy).
 *    Markup: those elements are renamed (`<x-iframe>`, inert).
 *    Guard: the WebRTC constructors and XSLT removed, `createElement` of those tags makes an inert
 *    `x-` element, the Trusted Types default policy renames them in every HTML string the page
 *    writes (innerHTML, insertAdjacentHTML, document.write, DOMParser, srcdoc), and any that
 *    still appears is removed as it is added.
 *
 * Left, and said in README: a page that tries to navigate its own frame (`location`, a link, a
 * meta refresh) makes Chromium open a bare TCP connection to the destination (a preconnect: no
 * request, no byte of data) before the frame policy refuses the navigation; the Navigation API,
 * which could cancel it, has its events disabled in an opaque origin.
 */
/** Tags renamed to an inert `x-` element in a page's markup and in everything it writes. */
export const INERT_TAGS = ["iframe", "frame", "frameset", "object", "embed", "applet", "portal", "fencedframe", "link"] as const;

/** The artifact's own HTML response policy. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "img-src data: blob:",
  "font-src data:",
  "media-src data: blob:",
  "connect-src 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "child-src 'none'",
  "worker-src 'none'",
  "manifest-src 'none'",
  "frame-ancestors 'self'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types default",
  "sandbox allow-scripts",
].join("; ");

/** The frame page's policy: its own styles, the artifact frame from the app's origin only, nothing else. */
export const FRAME_PAGE_CSP = ["default-src 'none'", "style-src 'unsafe-inline'", "frame-src 'self'", "img-src 'self'", "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'"].join("; ");

/** Features turned off (Permissions-Policy; only names Chromium knows, or it logs an error per name). */
export const PAGE_PERMISSIONS = ["accelerometer=()", "autoplay=()", "camera=()", "display-capture=()", "geolocation=()", "gyroscope=()", "hid=()", "magnetometer=()", "microphone=()", "midi=()", "payment=()", "publickey-credentials-get=()", "serial=()", "usb=()", "xr-spatial-tracking=()"].join(", ");

const COMMON_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-DNS-Prefetch-Control": "off",
  "Permissions-Policy": PAGE_PERMISSIONS,
};

/** Headers of the artifact's HTML response. */
export function pageHeaders(): Record<string, string> {
  return { ...COMMON_HEADERS, "Content-Security-Policy": PAGE_CSP, "Cross-Origin-Resource-Policy": "same-origin" };
}

/** Headers of the frame page. */
export function framePageHeaders(): Record<string, string> {
  return { ...COMMON_HEADERS, "Content-Security-Policy": FRAME_PAGE_CSP, "X-Frame-Options": "DENY" };
}

const TAG_PATTERN = `(${INERT_TAGS.join("|")})`;

/** First in the page's `<head>`: see the module comment (3). Runs before any of the page's scripts. */
export const PAGE_GUARD_SCRIPT = `<script>(function(){
var INERT=/^${TAG_PATTERN}$/i, TAGS=/<(\\/?)${TAG_PATTERN}(?=[\\s\\/>])/gi;
function inert(s){return String(s).replace(TAGS,"<$1x-$2")}
try{if(window.trustedTypes&&trustedTypes.createPolicy)trustedTypes.createPolicy("default",{createHTML:inert,createScript:function(s){return s},createScriptURL:function(s){return s}})}catch(e){}
["RTCPeerConnection","webkitRTCPeerConnection","RTCDataChannel","RTCIceTransport","RTCSctpTransport","RTCDtlsTransport","RTCRtpSender","RTCRtpReceiver","RTCRtpTransceiver","RTCIceCandidate","RTCSessionDescription","XSLTProcessor"].forEach(function(n){try{Object.defineProperty(window,n,{value:undefined,configurable:false,writable:false})}catch(e){}});
var D=Document.prototype,ce=D.createElement,cen=D.createElementNS;
Object.defineProperty(D,"createElement",{configurable:false,writable:false,value:function(n,o){return INERT.test(String(n))?ce.call(this,"x-"+n):ce.apply(this,arguments)}});
Object.defineProperty(D,"createElementNS",{configurable:false,writable:false,value:function(ns,n){var local=String(n).split(":").pop();return INERT.test(local)?ce.call(this,"x-"+local):cen.apply(this,arguments)}});
new MutationObserver(function(rs){rs.forEach(function(r){r.addedNodes.forEach(function(n){if(n.nodeType===1&&INERT.test(n.localName)&&n.parentNode)n.parentNode.removeChild(n);if(n.querySelectorAll)Array.prototype.forEach.call(n.querySelectorAll("${INERT_TAGS.join(",")}"),function(x){x.parentNode.removeChild(x)})})})}).observe(document,{childList:true,subtree:true});
})();</script>`;

/** Renames every inert tag (see {@link INERT_TAGS}) in HTML: what the browser's tokenizer could read as one becomes `<x-…>`. */
export function inertTags(html: string): string {
  return html.replace(new RegExp(`<(\\/?)${TAG_PATTERN}(?=[\\s/>])`, "gi"), "<$1x-$2");
}

/**
 * The artifact's HTML as served: every inert tag renamed in the markup — with the same rule the
 * guard applies to what the page writes, over the whole text, so no tokenizer subtlety (comments,
 * raw text) can hide one — and the guard first in the document (after the doctype), before any
 * script of the page.
 */
export function guardedPage(html: string): string {
  const renamed = inertTags(html);
  const at = /^\uFEFF?\s*<!doctype[^>]*>/i.exec(renamed)?.[0].length ?? 0;
  return renamed.slice(0, at) + PAGE_GUARD_SCRIPT + renamed.slice(at);
}
