import { ThinkingLevel, type Content, type GenerateContentConfig, type Part, type ThinkingConfig } from '@google/genai';
import { decodeProviderState } from './provider-state.js';
import { replySchemaOf } from './structured-output.js';
import type { LlmMessage, LlmReasoningEffort, LlmRequest } from './types.js';

/** Prefix of tool-call ids this adapter invents when Gemini sends none; never sent back. */
export const GEMINI_SYNTHETIC_ID_PREFIX = 'gcall_';
/** Key of the text part's signature inside provider_state (call ids key the others). */
export const GEMINI_TEXT_SIGNATURE_KEY = '_text';

const THINKING_BUDGET: Record<LlmReasoningEffort, number> = { low: 1024, medium: 8192, high: 24576 };
const THINKING_LEVEL: Record<LlmReasoningEffort, ThinkingLevel> = {
  low: ThinkingLevel.LOW,
  medium: ThinkingLevel.MEDIUM,
  high: ThinkingLevel.HIGH,
};

function signatures(state: string | undefined): Record<string, string> {
  const sigs = decodeProviderState('gemini', state)?.['signatures'];
  return sigs && typeof sigs === 'object' ? (sigs as Record<string, string>) : {};
}

function vendorId(id: string): { id?: string } {
  return id.startsWith(GEMINI_SYNTHETIC_ID_PREFIX) ? {} : { id };
}

function partsOf(m: LlmMessage): Part[] {
  if (m.role === 'user') {
    return m.content.flatMap((p): Part[] => {
      if (p.type === 'text') return p.text ? [{ text: p.text }] : [];
      return [{ inlineData: { mimeType: p.media_type, data: p.data_base64 } }];
    });
  }
  if (m.role === 'tool') {
    const response = m.is_error ? { error: m.content } : { output: m.content };
    return [{ functionResponse: { ...vendorId(m.tool_call_id), name: m.name, response } }];
  }
  const sigs = signatures(m.provider_state);
  const sig = (key: string) => (sigs[key] ? { thoughtSignature: sigs[key] } : {});
  return [
    ...(m.content ? [{ text: m.content, ...sig(GEMINI_TEXT_SIGNATURE_KEY) }] : []),
    ...(m.tool_calls ?? []).map((c) => ({ functionCall: { ...vendorId(c.id), name: c.name, args: c.arguments }, ...sig(c.id) })),
  ];
}

/** Maps neutral messages to Gemini contents; function responses go in user turns, merged. */
export function toGeminiContents(messages: LlmMessage[]): Content[] {
  const out: Content[] = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'model' : 'user';
    const parts = partsOf(m);
    if (!parts.length) continue;
    const last = out.at(-1);
    if (last && last.role === role) last.parts!.push(...parts);
    else out.push({ role, parts });
  }
  return out;
}

/** Gemini 2.x takes a token budget; later models take a thinking level. */
export function geminiThinkingConfig(model: string, effort: LlmReasoningEffort): ThinkingConfig {
  return /^(models\/)?gemini-(1|2)\./.test(model)
    ? { includeThoughts: true, thinkingBudget: THINKING_BUDGET[effort] }
    : { includeThoughts: true, thinkingLevel: THINKING_LEVEL[effort] };
}

/**
 * The generation config. The SDK's automatic function calling and automatic stream
 * continuation are switched off: the turn engine runs tools, `streamWithRetries` retries.
 */
export function toGeminiConfig(req: LlmRequest): GenerateContentConfig {
  const { max_tokens, temperature, reasoning_effort, response_format } = req.controls;
  return {
    ...(response_format && nativeJsonWith(req)
      ? { responseMimeType: 'application/json', responseJsonSchema: replySchemaOf(response_format) }
      : {}),
    ...(req.system ? { systemInstruction: req.system } : {}),
    ...(req.tools.length
      ? {
          tools: [
            {
              functionDeclarations: req.tools.map((t) => ({
                name: t.name,
                description: t.description,
                parametersJsonSchema: t.parameters,
              })),
            },
          ],
        }
      : {}),
    ...(max_tokens !== undefined ? { maxOutputTokens: max_tokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(reasoning_effort ? { thinkingConfig: geminiThinkingConfig(req.model, reasoning_effort) } : {}),
    ...(req.signal ? { abortSignal: req.signal } : {}),
    automaticFunctionCalling: { disable: true },
    automaticContinuation: false,
  };
}

/** Gemini before 3 refuses a JSON response type together with function declarations: there the repair step is the backstop. */
function nativeJsonWith(req: LlmRequest): boolean {
  return !(req.tools.length && /^(models\/)?gemini-(1|2)\./.test(req.model));
}
