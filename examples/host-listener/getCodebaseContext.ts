// How an agent host (a listener written in TypeScript) gets the code a task needs before it
// spawns an agent: one NATS request to `agog.codebase.context`, with the official `nats` client.
// See docs/MCP.md ("Context at agent spawn"). Checked by scripts/check-host-example.sh.
import { connect, JSONCodec, NatsConnection, ErrorCode } from "nats";

export interface ContextFile {
  repository: string;
  filePath: string;
  language?: string;
  ranges: { startLine: number; endLine: number }[];
  cut?: boolean;
}

export interface CodebaseContext {
  /** The block to put in the agent's prompt, headed "RELEVANT CODEBASE CONTEXT". */
  block: string;
  /** The block's tokens, as docs/WIRE.md counts them; never more than the budget. */
  tokens: number;
  files: ContextFile[];
  warning?: string;
}

interface Reply extends Partial<CodebaseContext> {
  success: boolean;
  error?: { code: string; message: string };
}

const codec = JSONCodec<unknown>();

/**
 * The code `task` (a ticket's title and body) most likely needs, within `budgetTokens`.
 * Resolves to `null` when no codesearch daemon answers in time, so the host can spawn the
 * agent without context rather than not at all; rejects on a request the daemon refuses.
 */
export async function getCodebaseContext(
  nc: NatsConnection,
  task: string,
  options: { budgetTokens?: number; workspace?: string; repository?: string; timeoutMs?: number } = {},
): Promise<CodebaseContext | null> {
  const { timeoutMs = 5000, workspace, ...rest } = options;
  // A workspace's own subject is served whatever the daemon's plain-subject policy is.
  const subject = workspace
    ? `agog.workspace.${workspace}.codebase.context`
    : "agog.codebase.context";
  let reply: Reply;
  try {
    const msg = await nc.request(subject, codec.encode({ task, workspace, ...rest }), {
      timeout: timeoutMs,
    });
    reply = codec.decode(msg.data) as Reply;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === ErrorCode.NoResponders || code === ErrorCode.Timeout) {
      return null;
    }
    throw e;
  }
  if (!reply.success) {
    throw new Error(`codesearch: ${reply.error?.code}: ${reply.error?.message}`);
  }
  return {
    block: reply.block ?? "",
    tokens: reply.tokens ?? 0,
    files: reply.files ?? [],
    warning: reply.warning,
  };
}

// `node getCodebaseContext.js "task text" [budget]`: prints the block and its size.
async function main(): Promise<void> {
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  try {
    const task = process.argv[2] ?? "where is the configuration loaded";
    const budget = Number(process.argv[3] ?? 4000);
    const context = await getCodebaseContext(nc, task, { budgetTokens: budget });
    if (context === null) {
      console.error("no codesearch daemon answered; spawning without context");
      process.exitCode = 3;
      return;
    }
    console.log(context.block);
    console.error(`${context.tokens} tokens in ${context.files.length} files`);
  } finally {
    await nc.close();
  }
}

if (process.argv[1]?.endsWith("getCodebaseContext.js")) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
