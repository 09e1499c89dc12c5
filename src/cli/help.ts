/**
 * What `voxpipe CMD --help` says under the usage line: each option with its
 * default. `test/cli/help.test.ts` checks that every option of a usage line
 * is described here.
 */
const SAY: [string, string][] = [
  ['TEXT', 'what to say; without it, standard input is read'],
  ['--out FILE|-', 'a file (its extension picks the container: .wav, .pcm, .mp3, .opus/.ogg; others such as .flac through ffmpeg) or - for standard output; default: play on the speakers (no audio device: a WAV file, and a note says where)'],
  ['--format pcm|wav|mp3|opus', 'what the service sends; default pcm'],
  ['--voice ID', "default: the deployment's default voice for the model"],
  ['--model ID', "default: the deployment's default model, else svc-s21pro-flash"],
  ['--speed N', "0.5 to 2; default the service's (1)"],
  ['--transport auto|realtime|sync|async|compat', 'default auto: realtime, failing over to sync HTTP'],
  ['--mode simple|reliable', 'realtime mode; default reliable'],
  ['--json', 'one JSON summary line on standard output (with --out FILE)'],
];

export const OPTION_HELP: Record<string, [string, string][]> = {
  say: SAY,
  speak: SAY.filter(([flag]) => flag !== 'TEXT'),
  serve: [
    ['--host H', 'default 127.0.0.1'],
    ['--port P|0', 'default 0: a free port (the listening line on standard output says which)'],
    ['--engine espeak|tone|auto', 'default auto: espeak when installed, else tone'],
    ['--accounts FILE', 'a JSON array of { apiKey, userId, credits?, apiQuota? }; default one account with VOXPIPE_API_KEY, else sk-local-dev'],
    ['--faults JSON', 'fault injection (FaultPlan), e.g. {"realtimeClose":{"afterAudioFrames":5,"code":1012}}; default none'],
    ['--allow-private-urls', 'accept loopback and private URLs as task inputs; default off'],
    ['--rate-limit REQUESTS_PER_SECOND', 'per account; default none'],
    ['--dialect reference|alt|minimal', 'how the points the spec leaves open are taken; default VOXPIPE_DIALECT, else reference'],
    ['--demo', 'serve the browser demo at /demo; default off'],
    ['--data DIR', 'keep accounts, voices, jobs, requests and the ledger in a PGlite database there, across restarts (one process per directory); default in memory'],
    ['--database URL', 'keep them in a PostgreSQL database instead (postgres://user:password@host:port/db; default VOXPIPE_DATABASE_URL); one server process per store'],
    ['--database-schema NAME', 'the database schema the tables live in, created if missing; default public'],

  ],
  jobs: [
    ['create TEXT', 'an asynchronous TTS job'],
    ['--voice ID', "default: the deployment's default voice"],
    ['--model ID', 'default svc-s21pro-flash'],
    ['--format F', 'pcm, wav, mp3 or opus; default: from the --out extension, else the service\'s'],
    ['--speed N', "default the service's (1)"],
    ['--wait', 'wait for the job to end (polling 3 s growing to 5 s); default off'],
    ['--out FILE', 'download the audio there (converted to what the extension says)'],
    ['--json', 'JSON on standard output'],
    ['get ID | wait ID', 'one job; wait polls until it ends'],
    ['list [--status S] [--limit N] [--page N]', 'jobs, newest first; default limit the service\'s'],
    ['download ID --out FILE', 'the audio of a finished job'],
  ],
  voices: [
    ['list', 'the voices (default action)'],
    ['--type public|personal', 'default both'],
    ['--model ID', 'voices of one model; default all'],
    ['--json', 'JSON on standard output'],
    ['clone NAME AUDIO_URL|FILE', 'a personal voice from 10 s to 5 min of speech'],
    ['--language TAG', "default: the service's detection"],
    ['--description TEXT', 'default none'],
    ['delete VOICE_ID', 'a personal voice'],
  ],
  design: [
    ['create PROMPT', 'voice candidates from a description'],
    ['--preview-text T', 'what the previews say; default "Hello! This is a preview of the voice you designed."'],
    ['--provider ID', 'repeatable; default the service\'s'],
    ['--idempotency-key K', 'replays the first result for the same body; default none'],
    ['preview DESIGN_ID CANDIDATE_ID --out FILE|-', "a candidate's preview (converted to what the extension says)"],
    ['--format wav|mp3', 'default: from the --out extension, else wav'],
    ['save DESIGN_ID CANDIDATE_ID --name N', 'keep a candidate as a personal voice'],
    ['--json', 'JSON on standard output'],
  ],
  profile: [
    ['--webhook-url URL', 'set the task webhook; default: only read the profile'],
    ['--json', 'JSON on standard output'],
  ],
  usage: [
    ['--limit N', '1 to 100 recent entries; default the service\'s'],
    ['--json', 'JSON on standard output'],
  ],
  transcribe: [
    ['AUDIO_URL|FILE', 'a local file is served to the service from 127.0.0.1 (embedded default or serve --allow-private-urls)'],
    ['--model M', "default: the service's"],
    ['--language TAG', 'default: detected'],
    ['--duration SECONDS', 'the audio\'s length, for the quota; default: measured where possible'],
    ['--json', 'JSON on standard output'],
  ],
  image: [
    ['PROMPT', 'what to draw'],
    ['--model M', "default: the catalog's default"],
    ['--aspect-ratio W:H', "default the model's"],
    ['--edit IMAGE_URL|FILE', 'edit an image instead; default none'],
    ['--out FILE|-', 'a .png; default <task id>.png in the current folder'],
    ['--json', 'JSON on standard output'],
  ],
  video: [
    ['PROMPT', 'what to show'],
    ['--model M', "default: the catalog's default"],
    ['--seconds N', "default the model's"],
    ['--size WxH', "default the model's"],
    ['--start-frame IMAGE_URL|FILE', 'default none'],
    ['--out FILE|-', 'a .mp4; default <task id>.mp4 in the current folder'],
    ['--json', 'JSON on standard output'],
  ],
  lipsync: [
    ['--audio AUDIO_URL|FILE', 'the speech'],
    ['--video VIDEO_URL|FILE', 'the face, moving (or --image)'],
    ['--image IMAGE_URL|FILE', 'the face, still (or --video)'],
    ['--duration SECONDS', 'the audio\'s length, for the quota; default: measured where possible'],
    ['--model M', "default: the catalog's default"],
    ['--out FILE|-', 'a .mp4; default <task id>.mp4 in the current folder'],
    ['--json', 'JSON on standard output'],
  ],
  bench: [['(every option)', 'defaults in parentheses in the usage line; see BENCHMARKS.md']],
};

const ENVIRONMENT = 'environment: VOXPIPE_BASE_URL and VOXPIPE_API_KEY (a deployment; unset: the embedded reference server), VOXPIPE_ROOT_URL, VOXPIPE_WS_URL, VOXPIPE_RT_HTTP_URL, VOXPIPE_DEBUG, VOXPIPE_DATA_DIR and VOXPIPE_EPHEMERAL (the embedded server\'s state), VOXPIPE_DATABASE_URL (serve)';

/** What every command but serve and bench takes (`main.ts` takes it out before the command parses). */
const EPHEMERAL: [string, string] = ['--ephemeral', 'on the embedded default, keep nothing between commands; default: voices, jobs, designs and usage are kept in VOXPIPE_DATA_DIR, else $XDG_DATA_HOME/voxpipe, else ~/.local/share/voxpipe'];

/** The help of one command: its usage line, its options with their defaults, the environment. */
export function commandHelp(name: string, usage: string): string {
  const options = [...(OPTION_HELP[name] ?? []), ...(name === 'serve' || name === 'bench' ? [] : [EPHEMERAL])];
  const width = Math.min(44, Math.max(0, ...options.map(([flag]) => flag.length)));
  const lines = options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
  return [`usage: ${usage}`, ...(lines.length > 0 ? ['', 'options:', ...lines] : []), '', ENVIRONMENT].join('\n');
}
