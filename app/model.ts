/**
 * The model, picked from the settings: the environment's endpoint (OPENAI_API_KEY / OPENAI_BASE_URL)
 * wins, else the one chosen on the setup page — switchable, so the page changes it for the very next
 * request without a restart. Around it: the secret scrubber (vault values and configured keys, every
 * encoding, in requests and answers), what the endpoint can do (images, transcription) learnt as it
 * goes, and the intake of photos, voice notes and files into the person's workspace.
 */
import type { Config } from "../core/config/index.js";
import type { ContextMedia } from "../core/context/index.js";
import { MediaIntake } from "../core/inbound/index.js";
import { scrubSecrets, type Logger } from "../core/log/index.js";
import { EndpointTranscriber, ModelCapabilities, ModelInUse, OpenAIModelClient, SwitchableModelClient, VisionFallbackModel, type ModelEndpoint } from "../core/model/index.js";
import { SecretScrubbingModel } from "../core/secrets/index.js";
import { workspaceContextMedia, workspaceReceivedFiles } from "../sandbox/workspace/index.js";
import { clientFor, type SetupStore } from "../web/api/index.js";

/** The model parts the rest of the process uses. */
export interface Models {
  /** The switchable client the setup page sets (and reads: configured, model name). */
  switchable: SwitchableModelClient;
  /** What the runtime asks at every activation: the guarded model, or null while none is configured. */
  inUse: ModelInUse;
  /** Photos, voice notes, files and stickers: taken in on arrival (`intake`) and shown to the model (`context`). */
  media: { intake: MediaIntake; context: ContextMedia };
  /** What the setup page shows of the environment's model settings. */
  envModel: { vars: string[]; model: string | null; baseURL: string | null };
}

/** Makes the model parts; nothing is called until a request is made. */
export function createModels(config: Config, parts: { setup: SetupStore; dataDir: string; workspace: { quotaBytes: number }; logger: Logger; knownSecrets: () => Parameters<typeof scrubSecrets>[1] }): Models {
  const { setup, logger } = parts;
  const fromEnv = Boolean(config.OPENAI_API_KEY || config.OPENAI_BASE_URL);
  const stored = setup.model();
  const switchable = new SwitchableModelClient(
    fromEnv
      ? new OpenAIModelClient({
          model: config.OPENAI_MODEL,
          ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }),
          ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }),
          timeout: config.MODEL_TIMEOUT_MS,
        })
      : stored
        ? clientFor({ ...stored, apiKey: setup.apiKey() }, config.MODEL_TIMEOUT_MS)
        : null,
  );
  const endpoint = () => modelEndpoint(config, setup);
  const transcribes = config.OPENAI_TRANSCRIPTION_MODEL.toLowerCase() !== "off";
  const capabilities = new ModelCapabilities(
    {
      current: () => {
        const e = endpoint();
        return e && { key: `${e.baseURL ?? "openai"}|${e.model}`, model: e.model };
      },
      vision: config.OPENAI_VISION,
      transcription: () => transcribes && endpoint() !== null,
    },
    logger,
  );
  const transcriber = new EndpointTranscriber({ model: config.OPENAI_TRANSCRIPTION_MODEL, timeout: config.MODEL_TIMEOUT_MS, endpoint, enabled: transcribes });
  const files = workspaceReceivedFiles(parts.dataDir, config.MAX_ATTACHMENT_BYTES, parts.workspace);
  const guarded = new SecretScrubbingModel(new VisionFallbackModel(switchable, capabilities), (text) => scrubSecrets(text, parts.knownSecrets()));
  return {
    switchable,
    inUse: new ModelInUse(guarded, switchable),
    media: {
      intake: new MediaIntake({ files, transcriber: transcriber.current, capabilities, logger, maxBytes: config.MAX_ATTACHMENT_BYTES }),
      context: workspaceContextMedia(files, capabilities),
    },
    envModel: {
      vars: [config.OPENAI_API_KEY ? "OPENAI_API_KEY" : "", config.OPENAI_BASE_URL ? "OPENAI_BASE_URL" : ""].filter(Boolean),
      model: fromEnv ? config.OPENAI_MODEL : null,
      baseURL: fromEnv ? (config.OPENAI_BASE_URL ?? "https://api.openai.com/v1") : null,
    },
  };
}

/** The model endpoint in use now: the environment's settings win, else the setup page's choice (it can change while running). */
function modelEndpoint(config: Config, setup: SetupStore): ModelEndpoint | null {
  if (config.OPENAI_API_KEY || config.OPENAI_BASE_URL) {
    return { model: config.OPENAI_MODEL, ...(config.OPENAI_BASE_URL && { baseURL: config.OPENAI_BASE_URL }), ...(config.OPENAI_API_KEY && { apiKey: config.OPENAI_API_KEY }) };
  }
  const stored = setup.model();
  if (!stored) return null;
  const apiKey = setup.apiKey();
  return { model: stored.model, baseURL: stored.baseURL, ...(apiKey && { apiKey }) };
}
