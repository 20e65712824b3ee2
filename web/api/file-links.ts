import { Router } from "express";
import { asId } from "../../core/ids.js";
import type { ArtifactSource } from "../../sandbox/artifacts/index.js";
import type { WebSessions } from "./sessions.js";

/**
 * Download links to a person's files, for a messenger that refused the file itself (the outbox
 * sends the link instead; core/outbox/files.ts): `GET /files/:token` serves the file the signed
 * token names (see `WebSessions.fileToken`: person, file, expiry — 7 days), with its MIME type,
 * images inline, everything else as an attachment, under a sandboxing CSP. 404 for a forged,
 * expired or unknown token or a file that is gone. The token is the permission: no sign-in.
 */
export function fileLinksRouter(deps: { sessions: WebSessions; source: ArtifactSource }): Router {
  const router = Router();
  router.get("/files/:token", async (req, res) => {
    const link = deps.sessions.readFileToken(String(req.params.token));
    const loaded = link ? await deps.source.load(asId("person", link.personId), asId("artifact", link.artifactId)).catch(() => null) : null;
    if (!loaded) return void res.status(404).type("text/plain").send("This link has expired or the file is gone. Ask Familiar to send it again.");
    const { artifact, bytes } = loaded;
    const inline = /^image\/(png|jpeg|gif|webp)$/.test(artifact.mimeType);
    res.setHeader("content-type", artifact.mimeType);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("content-security-policy", "default-src 'none'; sandbox");
    res.setHeader("cache-control", "private, no-store");
    res.setHeader("content-disposition", `${inline ? "inline" : "attachment"}; filename*=UTF-8''${encodeURIComponent(artifact.name)}`);
    res.send(bytes);
  });
  return router;
}

/** The absolute download link of one of a person's files under `publicUrl`. */
export function fileLink(sessions: WebSessions, publicUrl: string, personId: string, artifactId: string): string {
  return `${publicUrl.replace(/\/$/, "")}/files/${sessions.fileToken(personId, artifactId)}`;
}
