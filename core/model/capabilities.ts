import type { Logger } from "../log.js";

/** What is known about one capability of the model endpoint. */
export type CapabilityState = "yes" | "no" | "unknown";

/** OPENAI_VISION: `auto` tries images and learns from the endpoint's first refusal; `off` never sends them. */
export type VisionSetting = "auto" | "off";

/**
 * What the configured model endpoint can do beyond text, as far as Familiar knows:
 *
 * - **vision** (images as `image_url` content parts): `off` by setting (OPENAI_VISION=off), else
 *   unknown until the first request with images — accepted means `yes`, refused (the endpoint
 *   rejects the request and accepts it without the images) means `no`.
 * - **transcription** (`POST /audio/transcriptions`): `off` when no transcription model is set
 *   (OPENAI_TRANSCRIPTION_MODEL=off) or there is no endpoint; else unknown until the first voice note —
 *   a 404/405/501 (or an unknown transcription model) means `no`, a transcript means `yes`.
 *
 * What was learnt is kept for the life of the process (a restart tries again, once). The state is
 * read at the moment a message arrives and when a context is assembled, so the first refusal changes
 * how every later message is handled.
 */
export class ModelCapabilities {
  private visionState: CapabilityState;
  private transcriptionState: CapabilityState;
  private visionReason: string | null = null;
  private transcriptionReason: string | null = null;

  constructor(
    readonly settings: {
      /** The chat model's name, for answers ("the model I use (gpt-4o-mini) …"). */
      model: string | null;
      vision: VisionSetting;
      /** Whether a transcription model is configured and an endpoint exists. */
      transcription: boolean;
    },
    private readonly logger?: Logger,
  ) {
    this.visionState = settings.model === null ? "no" : settings.vision === "off" ? "no" : "unknown";
    this.visionReason = settings.model === null ? "no model is configured" : settings.vision === "off" ? "OPENAI_VISION is off" : null;
    this.transcriptionState = settings.transcription ? "unknown" : "no";
    this.transcriptionReason = settings.transcription ? null : "no transcription service is configured";
  }

  /** Whether images may be sent to the model: `yes`, `no`, or `unknown` (auto, not tried yet: send them). */
  get vision(): CapabilityState {
    return this.visionState;
  }

  /** Whether voice notes can be transcribed: `yes`, `no`, or `unknown` (not tried yet: try). */
  get transcription(): CapabilityState {
    return this.transcriptionState;
  }

  /** Why vision is `no`, in a few words, or null. */
  get visionMissingBecause(): string | null {
    return this.visionReason;
  }

  /** Why transcription is `no`, in a few words, or null. */
  get transcriptionMissingBecause(): string | null {
    return this.transcriptionReason;
  }

  /** The endpoint answered a request that carried images. */
  visionAccepted(): void {
    if (this.visionState === "unknown") this.visionState = "yes";
  }

  /** The endpoint refused images (it answered the same request without them). */
  visionRefused(detail: string): void {
    if (this.visionState === "no") return;
    this.visionState = "no";
    this.visionReason = `the model ${this.settings.model ?? ""} does not accept images`.replace(/\s+/g, " ");
    this.logger?.warn({ model: this.settings.model, detail: detail.slice(0, 300) }, "the model refused images: images are described in words from now on (set OPENAI_VISION=off to skip the try)");
  }

  /** A voice note was transcribed. */
  transcriptionWorked(): void {
    if (this.transcriptionState === "unknown") this.transcriptionState = "yes";
  }

  /** The endpoint has no transcription. */
  transcriptionMissing(detail: string): void {
    if (this.transcriptionState === "no") return;
    this.transcriptionState = "no";
    this.transcriptionReason = "the model service has no speech-to-text";
    this.logger?.warn({ detail: detail.slice(0, 300) }, "the model endpoint has no transcription: voice notes are kept as files from now on");
  }
}
