"""The chat server of scripts/local-models.sh: llama.cpp's own HTTP server, prebuilt in the
xllamacpp wheel, serving one GGUF model on one host and port until SIGTERM.

xllamacpp.Server(CommonParams) starts llama.cpp's server in threads of this process (the
OpenAI-compatible /v1/chat/completions, /v1/models with the alias as the id, json_schema
response_format honoured, `usage` on every reply); this process only keeps it alive.

Settings that matter here (see scripts/README-local-models.md):
- one request at a time (n_parallel 1): chunksweep's local config sends one at a time anyway;
- generation threads and prompt (batch) threads are separate: on a busy machine, generation with
  as many threads as cores slows down sharply, prompt processing does not;
- the prompt cache is off (cache_prompt, and the host-memory cache cache_ram_mib): with it on, a
  temperature-0 reply can depend on what earlier requests left in the cache, and repeatable replies
  are what a measurement needs.
"""

import argparse
import os
import signal
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path of the GGUF file")
    parser.add_argument("--alias", required=True, help="model id reported by /v1/models")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--ctx", required=True, type=int, help="context window in tokens")
    parser.add_argument("--threads", required=True, type=int, help="generation threads")
    parser.add_argument("--batch-threads", required=True, type=int, help="prompt threads")
    args = parser.parse_args()

    import xllamacpp  # imported here so that --help works without the wheel

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.batch_threads
    params.cache_prompt = False
    params.cache_ram_mib = 0

    # SIGTERM (scripts/local-models.sh stop) ends the process at once: the server writes no
    # files, and its destructor can wait for a request in progress (seen at 28 s and counting).
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server = xllamacpp.Server(params)
    print(f"serving {args.alias} at {server.listening_address}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
