// corral board emitter for opencode, installed by `corral wire opencode PROJECT`.
// Tool hooks and the event bus become seed-002 v1 board events, POSTed fire-and-forget with a
// short timeout: a board that is down never slows or breaks the session. BOARD_AGENT_ID and
// BOARD_TASK are forwarded; BOARD_URL / BOARD_PORT override the board address baked in here.
import { spawn } from "node:child_process"
import fs from "node:fs"

const DEFAULT_URL = __CORRAL_BOARD_URL__
const TOKEN_FILE = __CORRAL_TOKEN_FILE__
const PYTHON = __CORRAL_PYTHON__
const EMITTER = __CORRAL_EMITTER__
const TIMEOUT_MS = 500

const KINDS = {
  read: "read", list: "search", glob: "search", grep: "search", codesearch: "search",
  edit: "edit", write: "edit", patch: "edit", multiedit: "edit", apply_patch: "edit",
  bash: "command", webfetch: "web", websearch: "web", todowrite: "plan", todoread: "plan",
  task: "subagent",
}
const TEST = /^\s*(pytest|python3? -m (pytest|unittest)|npm (run )?test|yarn test|pnpm test|go test|cargo test|make test|tox|nox|jest|vitest|mvn test|gradle test)\b/
const CHECK = /^\s*(ruff|mypy|pyright|eslint|tsc|flake8|black --check|cargo clippy)\b/
const GIT = /^\s*(git|gh)\s/

function boardUrl() {
  if (process.env.BOARD_URL) return process.env.BOARD_URL.replace(/\/+$/, "")
  if (/^\d+$/.test(process.env.BOARD_PORT || "")) return `http://127.0.0.1:${process.env.BOARD_PORT}`
  return DEFAULT_URL
}

function token() {
  if (process.env.CORRAL_TOKEN) return process.env.CORRAL_TOKEN
  try { return fs.readFileSync(TOKEN_FILE, "utf8").trim() || null } catch { return null }
}

function classify(tool, args) {
  args = args && typeof args === "object" ? args : {}
  let kind = KINDS[tool] || "other"
  const cmd = typeof args.command === "string" ? args.command.slice(0, 2000) : undefined
  const file = [args.filePath, args.path, args.file_path].find((v) => typeof v === "string")
  if (kind === "command" && cmd) {
    kind = GIT.test(cmd) ? "git" : TEST.test(cmd) ? "test" : CHECK.test(cmd) ? "check" : "command"
  }
  const what = cmd || file || args.pattern || args.url || args.description || ""
  const summary = (what ? `${tool}: ${what}` : tool).slice(0, 300)
  return { kind, summary, ...(file ? { file: file.slice(0, 1000) } : {}), ...(cmd ? { cmd } : {}) }
}

export const CorralBoard = async () => {
  const url = boardUrl()
  const auth = token()
  const seen = new Set()
  const calls = new Map()

  const post = (session, body) => {
    const event = { v: 1, session: String(session || "unknown").slice(0, 200), ...body }
    if (process.env.BOARD_AGENT_ID) event.agent = process.env.BOARD_AGENT_ID.slice(0, 200)
    if (process.env.BOARD_TASK) event.task = process.env.BOARD_TASK.slice(0, 200)
    const headers = { "Content-Type": "application/json" }
    if (auth) headers.Authorization = `Bearer ${auth}`
    return fetch(`${url}/api/events`, {
      method: "POST", headers, body: JSON.stringify(event), signal: AbortSignal.timeout(TIMEOUT_MS),
    }).then((r) => r.arrayBuffer()).catch(() => {})
  }

  // opencode ends without telling its plugins (no event, no exit hook reaches them), so a
  // detached watcher reports the session's end when this process is gone.
  const watch = (id) => {
    try {
      const args = [EMITTER, "watch", "--pid", String(process.pid), "--session", String(id),
        "--name", "opencode", "--url", url, "--token-file", TOKEN_FILE]
      spawn(PYTHON, args, { detached: true, stdio: "ignore" }).unref()
    } catch {}
  }

  const announce = (id) => {
    if (!id || seen.has(id)) return
    seen.add(id)
    post(id, { kind: "session", summary: "opencode session started" })
    watch(id)
  }

  return {
    event: async ({ event }) => {
      const p = (event && event.properties) || {}
      switch (event && event.type) {
        case "session.created":
          announce(p.info && p.info.id)
          break
        case "session.idle":
          announce(p.sessionID)
          post(p.sessionID, { kind: "idle", summary: "finished responding" })
          break
        case "session.error":
          post(p.sessionID, { kind: "other", summary: "session error", ok: false,
            detail: JSON.stringify(p.error || {}).slice(0, 2000) })
          break
        case "session.deleted":
          if (p.info && seen.delete(p.info.id)) post(p.info.id, { kind: "end", summary: "opencode session ended" })
          break
        case "server.instance.disposed":
        case "global.disposed": {
          // Awaited (bounded by the timeout) so the end lands before the process exits.
          const ids = [...seen]
          seen.clear()
          await Promise.all(ids.map((id) => post(id, { kind: "end", summary: "opencode session ended" })))
          break
        }
      }
    },
    "tool.execute.before": async (input, output) => {
      announce(input.sessionID)
      const what = classify(input.tool, output && output.args)
      if (input.callID) calls.set(input.callID, what)
      post(input.sessionID, { ...what, running: true })
    },
    "tool.execute.after": async (input, output) => {
      const meta = (output && output.metadata) || {}
      const failed = meta.error === true || (typeof meta.exit === "number" && meta.exit !== 0)
      const what = calls.get(input.callID) || classify(input.tool, input.args)
      calls.delete(input.callID)
      post(input.sessionID, { ...what, ok: !failed })
    },
  }
}
