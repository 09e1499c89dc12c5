/**
 * Layers point down (README "Layout"): every relative import in
 * src/ is read and each folder may import only the layers below it. A new
 * import that points up fails here with the file and the import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The layer of a file under src/: its top folder, or the file itself at the top. */
function layerOf(path: string): string {
  const rel = relative(SRC, path).replaceAll('\\', '/');
  return rel.includes('/') ? `${rel.split('/')[0]}/` : rel.replace(/\.ts$/, '');
}

/** Relative imports of a file (static, dynamic and type-only), resolved to src/ paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

/** What each layer may import besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  errors: ['protocol/'],
  'protocol/': ['errors'],
  backoff: [],
  budget: ['errors', 'protocol/'],
  defined: [],
  splice: ['protocol/', 'errors'],
  transport: ['protocol/', 'errors'],
  config: ['errors', 'protocol/'],
  // The channels' names and message types: what the Node side publishes on diagnostics_channel.
  'telemetry/': ['errors', 'transport'],
  'http/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'config', 'telemetry/'],
  'realtime/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'telemetry/'],
  discovery: ['protocol/', 'errors', 'http/', 'config', 'defined'],
  'stream/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'realtime/', 'discovery', 'telemetry/', 'codecs/'],
  speech: ['protocol/', 'errors', 'budget', 'defined', 'transport', 'config', 'http/', 'realtime/', 'discovery', 'stream/'],
  // voxpipe/telephony: a SpeechStream's consumer, like a sink.
  'telephony/': ['protocol/', 'errors', 'stream/'],
  // The server is a separate program over the shared wire vocabulary: never the client's code.
  'server/': ['protocol/', 'errors', 'backoff', 'defined'],
  // openService: the client's config, and the embedded server on demand.
  service: ['config', 'errors', 'protocol/', 'server/'],
  // Audio decoders (mp3, opus, wav, pcm to s16le): under the sinks that play and the stream that times words.
  'codecs/': ['protocol/', 'errors'],
  // Sinks sit beside the stream, not on it: they take bytes and a layout.
  'sinks/': ['protocol/', 'errors', 'defined', 'codecs/'],
  // The package entry: the client's layers, never the server's (service loads it on demand).
  index: ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'realtime/', 'discovery', 'stream/', 'sinks/', 'speech', 'service', 'telemetry/', 'codecs/'],
  // The browser never holds a key: no http/ (the one path that carries it), no config, no sinks.
  'browser/': ['protocol/', 'errors', 'backoff', 'defined', 'transport', 'splice', 'realtime/', 'stream/'],
  'integrations/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'realtime/', 'discovery', 'stream/', 'sinks/', 'speech', 'telemetry/', 'codecs/'],
  'bench/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'realtime/', 'discovery', 'stream/', 'sinks/', 'speech', 'codecs/'],
  // The CLI is the top: everything but the adapters for other programs.
  'cli/': ['protocol/', 'errors', 'budget', 'backoff', 'defined', 'transport', 'splice', 'config', 'http/', 'realtime/', 'discovery', 'stream/', 'sinks/', 'codecs/', 'speech', 'service', 'server/', 'bench/'],
};

/**
 * The one exception, said where it is: the browser demo (`serve --demo`)
 * plays the customer's app server, a client of the service, and asks the
 * service for its default voice the way a client does.
 */
const EXCEPTIONS: readonly string[] = ['server/demo/index.ts -> discovery.ts'];

describe('layers point down', () => {
  const files = sources(SRC);

  it.each(Object.keys(ALLOWED))('%s imports only what lies below it', (layer) => {
    const upward: string[] = [];
    for (const file of files.filter((f) => layerOf(f) === layer)) {
      for (const target of importsOf(file)) {
        const to = layerOf(target);
        const edge = `${relative(SRC, file)} -> ${relative(SRC, target)}`;
        if (to !== layer && !ALLOWED[layer]!.includes(to) && !EXCEPTIONS.includes(edge)) upward.push(edge);
      }
    }
    expect(upward).toEqual([]);
  });

  it('every folder and top-level file of src/ has a rule', () => {
    const layers = new Set(files.map(layerOf));
    expect([...layers].filter((l) => !(l in ALLOWED)).sort()).toEqual([]);
  });

  it('the check reads imports (it can fail)', () => {
    const stream = files.filter((f) => layerOf(f) === 'stream/');
    expect(stream.length).toBeGreaterThan(3);
    expect(stream.flatMap(importsOf).some((t) => layerOf(t) === 'protocol/')).toBe(true);
  });
});
