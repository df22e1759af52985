import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { defineCapability, defineTool, textResult } from '../../src/capabilities/define.js';
import { createCapabilityRegistry } from '../../src/capabilities/registry.js';
import {
  buildSystemPrompt,
  normalizeCapabilityRef,
  resolveCapabilities,
  validateCapabilityRefs,
  type CapabilityLayers,
} from '../../src/capabilities/resolve.js';
import type { Capability, Feature } from '../../src/capabilities/types.js';
import { UnprocessableError } from '../../src/errors.js';

const tool = (name: string) =>
  defineTool({ name, display_name: name, description: name, parameters: Type.Object({}), run: async () => textResult(name) });
function cap(id: string, opts: { deps?: string[]; features?: Feature[]; prompt?: string; tools?: string[] } = {}): Capability {
  return defineCapability({
    id,
    name: id.toUpperCase(),
    description: id,
    prompt: opts.prompt ?? `use ${id}`,
    tools: (opts.tools ?? [`${id}_tool`]).map(tool),
    configSchema: Type.Object({ n: Type.Optional(Type.Integer()), s: Type.Optional(Type.String()) }, { additionalProperties: false }),
    features: opts.features ?? [],
    dependencies: opts.deps ?? [],
  });
}

// a, b, c plain; d depends on e, e depends on f (transitive); g and h depend on each other (cycle).
const registry = createCapabilityRegistry({
  capabilities: [
    cap('a', { features: ['file_system'] }),
    cap('b', { features: ['key_value', 'secrets'] }),
    cap('c', { features: ['file_system'], prompt: '' }),
    cap('d', { deps: ['e'] }),
    cap('e', { deps: ['f'] }),
    cap('f', { tools: [] }),
    cap('g', { deps: ['h'] }),
    cap('h', { deps: ['g'] }),
  ],
});

/** given layers, when resolved, then … */
function given(layers: CapabilityLayers) {
  return resolveCapabilities(layers, registry);
}

describe('normalizeCapabilityRef', () => {
  it('turns ids and objects into {ref, config}', () => {
    assert.deepEqual(normalizeCapabilityRef('a'), { ref: 'a', config: {} });
    assert.deepEqual(normalizeCapabilityRef({ ref: 'a' }), { ref: 'a', config: {} });
    assert.deepEqual(normalizeCapabilityRef({ ref: 'a', config: null }), { ref: 'a', config: {} });
    assert.deepEqual(normalizeCapabilityRef({ ref: 'a', config: { n: 1 } }), { ref: 'a', config: { n: 1 } });
  });
});

describe('resolveCapabilities', () => {
  it('given no layers, then nothing is active', () => {
    assert.deepEqual(given({}), { capabilities: [], features: [], tools: [], prompt: '', unknown: [] });
  });

  it('given harness, agent and session items, then they merge in that order without duplicates', () => {
    const r = given({ harness: ['a', 'b'], agent: ['b', 'c'], session: [{ ref: 'a' }] });
    assert.deepEqual(r.capabilities, [
      { ref: 'a', config: {} },
      { ref: 'b', config: {} },
      { ref: 'c', config: {} },
    ]);
  });

  it('given the same ref in several layers, then later configs override earlier ones key by key', () => {
    const r = given({
      harness: [{ ref: 'a', config: { n: 1, s: 'harness' } }],
      agent: [{ ref: 'a', config: { n: 2 } }],
      session: ['a'],
    });
    assert.deepEqual(r.capabilities, [{ ref: 'a', config: { n: 2, s: 'harness' } }]);
  });

  it('given the same ref twice in one layer, then the later item wins too', () => {
    const r = given({
      agent: [
        { ref: 'a', config: { n: 1 } },
        { ref: 'a', config: { n: 3 } },
      ],
    });
    assert.deepEqual(r.capabilities, [{ ref: 'a', config: { n: 3 } }]);
  });

  it('given a capability with transitive dependencies, then they are added before it', () => {
    const r = given({ agent: ['a', 'd'] });
    assert.deepEqual(
      r.capabilities.map((c) => c.ref),
      ['a', 'f', 'e', 'd'],
    );
    assert.deepEqual(r.capabilities.find((c) => c.ref === 'e')!.config, {});
  });

  it('given a dependency that is also listed explicitly later, then it appears once with its explicit config', () => {
    const r = given({ harness: ['d'], session: [{ ref: 'f', config: { n: 9 } }] });
    assert.deepEqual(r.capabilities, [
      { ref: 'f', config: { n: 9 } },
      { ref: 'e', config: {} },
      { ref: 'd', config: {} },
    ]);
  });

  it('given a dependency cycle, then each capability appears once', () => {
    assert.deepEqual(
      given({ agent: ['g'] }).capabilities.map((c) => c.ref),
      ['h', 'g'],
    );
  });

  it('given capabilities with features, then features are their union in order', () => {
    assert.deepEqual(given({ agent: ['a', 'b', 'c'] }).features, ['file_system', 'key_value', 'secrets']);
  });

  it('given capabilities, then tools carry their capability id and resolved config', () => {
    const r = given({ harness: [{ ref: 'a', config: { n: 1 } }], agent: ['d'] });
    assert.deepEqual(
      r.tools.map((t) => [t.name, t.capability_id, t.config]),
      [
        ['a_tool', 'a', { n: 1 }],
        ['e_tool', 'e', {}],
        ['d_tool', 'd', {}],
      ],
    );
    assert.equal(typeof r.tools[0]!.execute, 'function');
  });

  it('given capabilities with prompts, then the prompt joins them as sections, skipping empty ones', () => {
    assert.equal(given({ agent: ['a', 'c', 'b'] }).prompt, '## A\nuse a\n\n## B\nuse b');
  });

  it('given an unknown ref, then it is left out and reported', () => {
    const r = given({ harness: ['a'], agent: ['gone'] });
    assert.deepEqual(
      r.capabilities.map((c) => c.ref),
      ['a'],
    );
    assert.deepEqual(r.unknown, ['gone']);
  });

  it('given the built-in session_schedule, then current_time comes along as its dependency', () => {
    const r = resolveCapabilities({ agent: ['session_schedule'] }, createCapabilityRegistry());
    assert.deepEqual(
      r.capabilities.map((c) => c.ref),
      ['current_time', 'session_schedule'],
    );
    assert.deepEqual(r.features, ['schedules']);
  });
});

describe('buildSystemPrompt', () => {
  it('prepends capability instructions to the base prompt', () => {
    assert.equal(buildSystemPrompt('You are helpful.', { prompt: '## A\nuse a' }), '## A\nuse a\n\nYou are helpful.');
  });
  it('returns the base prompt alone when no capability contributes', () => {
    assert.equal(buildSystemPrompt('Base.', { prompt: '' }), 'Base.');
    assert.equal(buildSystemPrompt('', { prompt: '## A\nx' }), '## A\nx');
  });
});

describe('validateCapabilityRefs', () => {
  const builtins = createCapabilityRegistry();
  const rejects = (items: unknown, message: RegExp) =>
    assert.throws(
      () => validateCapabilityRefs(items, builtins),
      (err: unknown) => err instanceof UnprocessableError && err.status === 422 && message.test(err.message),
    );

  it('accepts ids, {ref} and {ref, config} with valid configs', () => {
    validateCapabilityRefs(
      ['current_time', { ref: 'web_fetch', config: { timeout_ms: 1000 } }, { ref: 'session_storage', config: null }],
      builtins,
    );
    validateCapabilityRefs([], builtins);
  });
  it('rejects an unknown capability', () => rejects(['current_time', 'teleport'], /^Unknown capability: teleport$/));
  it('rejects a config that does not match the schema', () =>
    rejects([{ ref: 'web_fetch', config: { timeout_ms: -1 } }], /^Invalid config for capability web_fetch: timeout_ms must be >= 1$/));
  it('rejects an unknown config key', () =>
    rejects([{ ref: 'session_file_system', config: { max_size: 1 } }], /max_size is not a known setting/));
  it('rejects malformed items', () => {
    rejects('current_time', /must be an array/);
    rejects([''], /capabilities\[0\] must be a capability id/);
    rejects([{ config: {} }], /capabilities\[0\]/);
    rejects([{ ref: 'current_time', extra: 1 }], /capabilities\[0\]/);
    rejects([{ ref: 'current_time', config: [1] }], /capabilities\[0\]\.config must be an object/);
    rejects([42], /capabilities\[0\]/);
  });
});
