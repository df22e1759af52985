/**
 * What a turn attempt reads besides its log: the session's setup, the model, and the images of
 * the history. The setup and (for a fresh turn, whose controls travel in the job) the model do
 * not depend on the log, so they load while the log is being read.
 */
import { NotFoundError } from '../../src/errors.js';
import { LlmError, pickModelId, type LlmControls, type LlmImagePart, type LlmMessage, type ResolvedModel } from '../../src/llm/index.js';
import { responseFormatOf, TerminalTurnError, type MessagePart, type TurnJobData } from '../../src/turns/index.js';
import { toLlmMessages, type Transcript } from './log/transcript.js';
import type { TurnRunnerDeps } from './turn-runner-deps.js';
import { loadTurnSetup, type TurnSetup } from './turn-setup.js';

export class TurnInputs {
  readonly #deps: Pick<TurnRunnerDeps, 'models' | 'images'>;
  /** The session's setup; null when the session is gone. */
  readonly setup: Promise<TurnSetup | null>;
  #model: ResolvedModel | null = null;
  #summariser: Promise<ResolvedModel | null> | null = null;
  /** The model resolution started early (fresh turns); its failure surfaces at the first reason step. */
  readonly #modelLoading: Promise<ResolvedModel | null> | null = null;
  /** Images of the history, loaded once per attempt (every reason step sends the whole history). */
  readonly #images = new Map<string, Promise<LlmImagePart | null>>();

  constructor(
    deps: Pick<TurnRunnerDeps, 'store' | 'capabilities' | 'models' | 'images' | 'toolStorage'>,
    maxIterations: number,
    sessionId: string,
    job: TurnJobData,
  ) {
    this.#deps = deps;
    const input = job.preamble?.find((e) => e.type === 'input.message');
    const modelId = input?.type === 'input.message' ? input.data.message.controls?.['model_id'] : undefined;
    const controlsModelId = typeof modelId === 'string' ? modelId : undefined;
    this.setup = loadTurnSetup(
      { store: deps.store, capabilities: deps.capabilities, defaultMaxIterations: maxIterations, toolStorage: deps.toolStorage },
      sessionId,
      controlsModelId,
      job.user_id,
    );
    this.setup.catch(() => undefined);
    if (job.preamble) {
      this.#modelLoading = this.setup.then((setup) => (setup ? this.#resolve(setup, controlsModelId) : null));
      this.#modelLoading.catch(() => undefined);
    }
  }

  /** The model once a reason step resolved it (the decider names it in its records). */
  get resolved(): ResolvedModel | null {
    return this.#model;
  }

  async model(setup: TurnSetup, controls: Readonly<Record<string, unknown>>): Promise<ResolvedModel> {
    this.#model ??= (await this.#modelLoading) ?? (await this.#resolve(setup, controls['model_id'] as string | undefined));
    return this.#model;
  }

  /**
   * The model that writes summaries (`compaction.model_id`); null: the turn's own. One that no
   * longer resolves (deleted, its provider's key unreadable) falls back to the turn's own: a
   * summary from the session's model beats a turn that fails.
   */
  summariser(setup: TurnSetup): Promise<ResolvedModel | null> {
    const id = setup.compaction.modelId;
    this.#summariser ??= id ? this.#deps.models.resolve(setup.orgId, id).catch(() => null) : Promise.resolve(null);
    return this.#summariser;
  }

  messages(transcript: Transcript, orgId: string): Promise<LlmMessage[]> {
    return toLlmMessages(transcript, (part: MessagePart) => this.#image(orgId, String(part['image_id'])));
  }

  #image(orgId: string, imageId: string): Promise<LlmImagePart | null> {
    let loading = this.#images.get(imageId);
    if (!loading) {
      loading = this.#deps.images.load(orgId, imageId);
      this.#images.set(imageId, loading);
    }
    return loading;
  }

  async #resolve(setup: TurnSetup, controlsModelId: string | undefined): Promise<ResolvedModel> {
    const id = pickModelId(controlsModelId, setup.modelIds.session, setup.modelIds.agent, setup.modelIds.harness);
    try {
      // The setup read joined the model it picked; a resumed turn's controls may name another.
      if (id !== null && id === setup.model.id) return await this.#deps.models.resolveRow(setup.orgId, id, setup.model.row);
      return await this.#deps.models.resolve(setup.orgId, id);
    } catch (err) {
      if (err instanceof NotFoundError) throw new TerminalTurnError('Model not found', 'llm_error', { cause: err });
      if (err instanceof LlmError) throw new TerminalTurnError(err.message, 'llm_error', { cause: err });
      throw err;
    }
  }
}

export function llmControls(c: Readonly<Record<string, unknown>>): LlmControls {
  const out: LlmControls = {};
  if (typeof c['max_tokens'] === 'number') out.max_tokens = c['max_tokens'];
  if (typeof c['temperature'] === 'number') out.temperature = c['temperature'];
  if (c['reasoning_effort'] === 'low' || c['reasoning_effort'] === 'medium' || c['reasoning_effort'] === 'high')
    out.reasoning_effort = c['reasoning_effort'];
  const format = responseFormatOf(c);
  if (format) out.response_format = format;
  return out;
}
