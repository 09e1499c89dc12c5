/**
 * A stand-in OpenAI chat-completions endpoint for the recipe tests: streams
 * a fixed answer as `chat.completion.chunk` server-sent events, a few
 * characters per delta, the way a chat model does. Only what the `openai`
 * and `@openai/agents` packages read is sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeChatServer {
  /** `OPENAI_BASE_URL` for clients: `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Request bodies received. */
  requests: unknown[];
  close(): Promise<void>;
}

export async function startFakeChatServer(answer: string, options: { deltaChars?: number; delayMs?: number } = {}): Promise<FakeChatServer> {
  const deltaChars = options.deltaChars ?? 3;
  const delayMs = options.delayMs ?? 2;
  const requests: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const request = JSON.parse(body) as { model?: string; stream?: boolean };
      requests.push(request);
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: request.model ?? 'fake' };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (chunk: object) => res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
      void (async () => {
        send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
        for (let i = 0; i < answer.length; i += deltaChars) {
          send({ choices: [{ index: 0, delta: { content: answer.slice(i, i + deltaChars) }, finish_reason: null }] });
          await new Promise((r) => setTimeout(r, delayMs));
        }
        send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: Math.ceil(answer.length / 4), total_tokens: 5 + Math.ceil(answer.length / 4) } });
        res.end('data: [DONE]\n\n');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
