import type { Logger } from "../log/index.js";

/** What is known about one capability of the model endpoint. */
export type CapabilityState = "yes" | "no" | "unknown";

/** OPENAI_VISION: `auto` tries images and learns from the endpoint's first refusal; `off` never sends them. */
export type VisionSetting = "auto" | "off";

/** The model answering now: `key` names the endpoint and model (what is learnt is kept per key). */
export interface CurrentModel {
  key: string;
  model: string;
}

/** What is learnt about one endpoint and model. */
interface Learnt {
  vision: CapabilityState;
  transcription: CapabilityState;
}

/**
 * What the model endpoint in use can do beyond text, as far as Familiar knows:
 *
 * - **vision** (images as `image_url` content parts): `no` without a model or with OPENAI_VISION=off;
 *   else unknown until the first request with images — accepted means `yes`, refused (the endpoint
 *   rejects the request and accepts it without the images) means `no`.
 * - **transcription** (`POST /audio/transcriptions`): `no` without a transcription model
 *   (OPENAI_TRANSCRIPTION_MODEL=off) or endpoint; else unknown until the first voice note — a
 *   404/405/501 (or an unknown transcription model) means `no`, a transcript means `yes`.
 *
 * What is learnt is kept per endpoint and model for the life of the process: when the model is
 * switched (the setup page), the new one is tried afresh; a restart tries again, once. The state is
 * read when a message arrives and when a context is assembled, so the first refusal changes how
 * every later message is handled.
 */
export class ModelCapabilities {
  private readonly learnt = new Map<string, Learnt>();
  private readonly reasons = new Map<string, { vision?: string; transcription?: string }>();

  constructor(
    private readonly settings: {
      /** The model answering now, or null when none is configured. */
      current: () => CurrentModel | null;
      vision: VisionSetting;
      /** Whether a transcription model is configured for the current endpoint. */
      transcription: () => boolean;
    },
    private readonly logger?: Logger,
  ) {}

  /** Capabilities of one fixed model (`model: null`: none configured), e.g. for tests. */
  static fixed(settings: { model: string | null; vision: VisionSetting; transcription: boolean }, logger?: Logger): ModelCapabilities {
    const current = settings.model === null ? null : { key: settings.model, model: settings.model };
    return new ModelCapabilities({ current: () => current, vision: settings.vision, transcription: () => settings.transcription }, logger);
  }

  /** Whether images may be sent to the model: `yes`, `no`, or `unknown` (auto, not tried yet: send them). */
  get vision(): CapabilityState {
    const current = this.settings.current();
    if (!current || this.settings.vision === "off") return "no";
    return this.state(current.key).vision;
  }

  /** Whether voice notes can be transcribed: `yes`, `no`, or `unknown` (not tried yet: try). */
  get transcription(): CapabilityState {
    const current = this.settings.current();
    if (!current || !this.settings.transcription()) return "no";
    return this.state(current.key).transcription;
  }

  /** Why vision is `no`, in a few words, or null. */
  get visionMissingBecause(): string | null {
    const current = this.settings.current();
    if (!current) return "no model is configured";
    if (this.settings.vision === "off") return "OPENAI_VISION is off";
    return this.state(current.key).vision === "no" ? (this.reasons.get(current.key)?.vision ?? null) : null;
  }

  /** Why transcription is `no`, in a few words, or null. */
  get transcriptionMissingBecause(): string | null {
    const current = this.settings.current();
    if (!current || !this.settings.transcription()) return "no transcription service is configured";
    return this.state(current.key).transcription === "no" ? (this.reasons.get(current.key)?.transcription ?? null) : null;
  }

  /** The endpoint answered a request that carried images. */
  visionAccepted(): void {
    const current = this.settings.current();
    if (current && this.state(current.key).vision === "unknown") this.state(current.key).vision = "yes";
  }

  /** The endpoint refused images (it answered the same request without them). */
  visionRefused(detail: string): void {
    const current = this.settings.current();
    if (!current || this.state(current.key).vision === "no") return;
    this.state(current.key).vision = "no";
    this.reason(current.key).vision = `the model ${current.model} does not accept images`;
    this.logger?.warn({ model: current.model, detail: detail.slice(0, 300) }, "the model refused images: photos are described in words from now on (set OPENAI_VISION=off to skip the try)");
  }

  /** A voice note was transcribed. */
  transcriptionWorked(): void {
    const current = this.settings.current();
    if (current && this.state(current.key).transcription === "unknown") this.state(current.key).transcription = "yes";
  }

  /** The endpoint has no transcription. */
  transcriptionMissing(detail: string): void {
    const current = this.settings.current();
    if (!current || this.state(current.key).transcription === "no") return;
    this.state(current.key).transcription = "no";
    this.reason(current.key).transcription = "the model service has no speech-to-text";
    this.logger?.warn({ detail: detail.slice(0, 300) }, "the model endpoint has no transcription: voice notes are kept as files from now on");
  }

  private state(key: string): Learnt {
    let learnt = this.learnt.get(key);
    if (!learnt) {
      learnt = { vision: "unknown", transcription: "unknown" };
      this.learnt.set(key, learnt);
    }
    return learnt;
  }

  private reason(key: string): { vision?: string; transcription?: string } {
    let reasons = this.reasons.get(key);
    if (!reasons) {
      reasons = {};
      this.reasons.set(key, reasons);
    }
    return reasons;
  }
}
