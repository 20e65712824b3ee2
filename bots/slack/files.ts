import { AttachmentError } from "../../core/channels/index.js";
import { downloadLimited } from "../shared/index.js";
import type { SlackFile } from "./inbound.js";

/** The bot token and the hosts it may be sent to for file downloads. */
export interface SlackFileAccess {
  botToken: string;
  /** Host of the Web API (SLACK_API_URL, Slack's own by default). */
  apiHost: string;
  /** files.slack.com and the API host. */
  hosts: ReadonlySet<string>;
}

/** File access for SLACK_BOT_TOKEN and SLACK_API_URL (default `https://slack.com/api/`). */
export function slackFileAccess(botToken: string, apiUrl: string | undefined): SlackFileAccess {
  const apiHost = new URL(apiUrl ?? "https://slack.com/api/").host;
  return { botToken, apiHost, hosts: new Set(["files.slack.com", apiHost]) };
}

/**
 * Downloads a shared file: Slack serves `url_private_download` (else `url_private`) only with the
 * bot token in `Authorization: Bearer` (Slack API: "Authenticating to download files"; needs the
 * files:read scope, without which Slack answers its sign-in page). The token is sent only to
 * files.slack.com over https, or to the host of SLACK_API_URL. Throws AttachmentError: `unavailable`
 * for a file Slack will not serve (deleted, over the plan's limit, access to be checked, elsewhere).
 */
export async function fetchSlackFile(file: SlackFile, maxBytes: number, access: SlackFileAccess): Promise<Buffer> {
  if (file.mode === "tombstone" || file.mode === "hidden_by_limit" || file.file_access === "check_file_info" || file.file_access === "access_denied") {
    throw new AttachmentError("unavailable", `Slack file ${file.id} cannot be downloaded (${file.mode ?? file.file_access})`);
  }
  let url: URL;
  try {
    url = new URL(file.url_private_download ?? file.url_private ?? "");
  } catch {
    throw new AttachmentError("unavailable", `Slack file ${file.id} has no download URL`);
  }
  if (!access.hosts.has(url.host) || (url.protocol !== "https:" && url.host !== access.apiHost)) {
    throw new AttachmentError("unavailable", `Slack file ${file.id} is on ${url.host}, where the bot token is never sent`);
  }
  return downloadLimited(url.href, {
    maxBytes,
    what: `Slack file ${file.id}`,
    announcedSize: file.size ?? null,
    headers: { authorization: `Bearer ${access.botToken}` },
    refuseHtml: `Slack answered with its sign-in page instead of file ${file.id}: the app needs the files:read scope`,
  });
}
