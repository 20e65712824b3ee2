/**
 * The Artifacts tab: what the person keeps — documents, PDFs, web pages, data files, images —
 * newest first, each with its kind, version, size, date, task and whether it was made from content
 * from outside. Open (the artifact's own page: a web page runs there in a sandboxed frame),
 * download, look at older versions, delete a version or the whole artifact.
 */
import { useState } from "preact/hooks";
import { ApiError, api, localTime } from "./api.js";
import { Empty, Pager, usePaged } from "./paged.js";

interface ArtifactJson {
  id: string;
  versionId: string;
  version: number;
  latest: boolean;
  kind: "document" | "pdf" | "page" | "data" | "image";
  title: string;
  name: string;
  mimeType: string;
  size: number;
  source: string;
  taskId: string | null;
  goalId: string | null;
  taint: { source: string } | null;
  createdAt: string;
  /** The title of the goal it was made for. */
  goal?: string | null;
  url: string;
  file: string;
}

const KIND_LABEL: Record<ArtifactJson["kind"], string> = { document: "Document", pdf: "PDF", page: "Web page", data: "Data file", image: "Image" };

function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** The tab. */
export function Artifacts({ tz }: { tz: string }) {
  const list = usePaged<ArtifactJson>("/api/web/artifacts?limit=30");
  const [versions, setVersions] = useState<{ id: string; items: ArtifactJson[] } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [notice, setNotice] = useState("");
  const showVersions = async (id: string) => {
    if (versions?.id === id) return setVersions(null);
    try {
      const data = await api<{ versions: ArtifactJson[] }>("GET", `/api/web/artifacts/${id}`);
      setVersions({ id, items: [...data.versions].reverse() });
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : String(err));
    }
  };
  const remove = async (a: ArtifactJson, version?: number) => {
    try {
      await api("DELETE", `/api/web/artifacts/${a.id}${version ? `?v=${version}` : ""}`);
      setConfirming(null);
      setVersions(null);
      // The list first: the notice appears with the list that no longer holds what was deleted.
      await list.reload();
      setNotice(version ? `Deleted version ${version} of “${a.title}”.` : `Deleted “${a.title}” and all its versions.`);
    } catch (err) {
      setNotice(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <div>
      <h2>Artifacts</h2>
      <p class="hint">What Familiar made or kept for you. A web page opens in a frame where it can run but reach nothing outside it.</p>
      {notice && <p role="status" class="notice">{notice}</p>}
      <Empty loaded={list.loaded} count={list.items.length}>Nothing kept yet. Ask Familiar for a document, a PDF or a small web page.</Empty>
      <ul class="cards" aria-label="Artifacts">
        {list.items.map((a) => (
          <li key={a.id} class="card artifact">
            <h3>
              <a href={a.url} target="_blank" rel="noopener">{a.title}</a>
            </h3>
            <p class="meta">
              {KIND_LABEL[a.kind]} · version {a.version} · {size(a.size)} · {localTime(a.createdAt, tz)}
              {a.goal ? ` · for “${a.goal}”` : ""}
            </p>
            {a.taint && <p class="warn">Made from content from outside ({a.taint.source}).</p>}
            {a.kind === "image" && <img class="thumb" src={a.file} alt={a.title} loading="lazy" />}
            <div class="actions">
              <a class="button" href={a.url} target="_blank" rel="noopener">Open</a>
              <a class="button" href={`${a.file}&download=1`} download={a.name}>Download</a>
              {a.version > 1 && (
                <button type="button" onClick={() => void showVersions(a.id)} aria-expanded={versions?.id === a.id}>
                  Versions
                </button>
              )}
              {confirming === a.id ? (
                <>
                  <button type="button" class="danger" onClick={() => void remove(a)}>Delete all {a.version > 1 ? `${a.version} versions` : ""}</button>
                  <button type="button" onClick={() => setConfirming(null)}>Keep</button>
                </>
              ) : (
                <button type="button" onClick={() => setConfirming(a.id)}>Delete</button>
              )}
            </div>
            {versions?.id === a.id && (
              <ul class="versions" aria-label={`Versions of ${a.title}`}>
                {versions.items.map((v) => (
                  <li key={v.versionId}>
                    <a href={v.url} target="_blank" rel="noopener">Version {v.version}</a> · {size(v.size)} · {localTime(v.createdAt, tz)}{" "}
                    <a href={`${v.file}&download=1`} download={v.name}>Download</a>{" "}
                    <button type="button" onClick={() => void remove(a, v.version)}>Delete version {v.version}</button>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
      <Pager next={list.next} error={list.error} more={() => void list.more()} />
    </div>
  );
}
