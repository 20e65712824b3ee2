import { Router } from "express";
import { checkExpressRequest } from "../http/index.js";

/** What the page shows: a messenger's connection state and its current pairing QR (raw string), if any. */
export type QrSource = () => { state: string; qr: string | null } | null;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `GET /whatsapp` on the local page: the WhatsApp pairing QR (drawn with block characters by
 * qrcode-terminal) while pairing, else the connection state. Loopback clients only, like the chat.
 * The page refreshes itself every 5 s while a QR is shown (WhatsApp rotates it).
 */
export function pairingQrRouter(source: QrSource, options: { allowRemote: boolean }): Router {
  const router = Router();
  router.get("/whatsapp", (req, res) => {
    const verdict = checkExpressRequest(req, options.allowRemote);
    if (!verdict.ok) return void res.status(403).type("text/plain").send(`Refused: ${verdict.reason}.`);
    const status = source();
    const render = (body: string, refresh: boolean) =>
      res
        .type("html")
        .set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8">${refresh ? '<meta http-equiv="refresh" content="5">' : ""}<title>Familiar · WhatsApp</title>` +
            `<style>body{font-family:system-ui,sans-serif;margin:2rem}pre{line-height:1;font-size:10px;letter-spacing:0}</style></head><body>${body}<p><a href="/">Back to the chat</a></p></body></html>`,
        );
    if (!status) return render("<h1>WhatsApp</h1><p>WhatsApp is not enabled. Set <code>WHATSAPP_ENABLED=true</code> and restart.</p>", false);
    if (!status.qr) return render(`<h1>WhatsApp</h1><p>State: ${escape(status.state)}.</p>`, status.state !== "ready");
    const qr = status.qr;
    // Loaded only while a QR is shown.
    import("qrcode-terminal").then(
      ({ default: qrcode }) =>
        qrcode.generate(qr, { small: true }, (drawn) => {
          render(`<h1>Pair WhatsApp</h1><p>On your phone: WhatsApp → Linked devices → Link a device, then scan:</p><pre aria-label="pairing QR code">${escape(drawn)}</pre>`, true);
        }),
      () => res.status(500).type("text/plain").send("could not draw the QR code"),
    );
  });
  return router;
}
