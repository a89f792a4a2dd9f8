/*
 * llama.cpp's own speed on a GGUF file, as the local model's bench reference: the loops of
 * llama.cpp's `llama-bench` (a prompt of n random tokens read in batches; then n tokens
 * written one decode at a time after such a prompt, at its depth, as Hearth writes after its
 * own; each repeated and averaged), calling llama.cpp's C API directly with nothing of Hearth
 * in between, and printing llama-bench's JSON rows (model_filename, n_prompt, n_gen,
 * n_depth, n_batch, n_threads, avg_ts) for benches/local_model.rs.
 *
 * Why not llama-bench itself: llama-cpp-sys-2 ships llama.cpp without its tools/ folder, so
 * llama-bench cannot be built from the sources Hearth links, and a llama-bench of another
 * version or build would measure another llama.cpp. This program is linked against the very
 * static libraries the worker uses (scripts/bench.sh finds them in cargo's build folder) and
 * makes its context as the worker does (Hearth's context length, 512-token batches).
 *
 * Usage: llama_reference MODEL.gguf THREADS N_PROMPT N_GEN REPETITIONS [BATCH]
 * (BATCH, the tokens read per decode call, is 512 unless given.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void quiet(enum ggml_log_level level, const char *text, void *data) {
    (void)level;
    (void)text;
    (void)data;
}

/* Reads n_prompt random tokens in batches of n_batch; returns the seconds it took. */
static double read_prompt(struct llama_context *ctx, int n_vocab, int n_prompt, int n_batch) {
    llama_token *tokens = malloc(sizeof(llama_token) * (size_t)n_batch);
    double started = now_seconds();
    for (int done = 0; done < n_prompt; done += n_batch) {
        int n = n_prompt - done < n_batch ? n_prompt - done : n_batch;
        for (int i = 0; i < n; i++) tokens[i] = rand() % n_vocab;
        if (llama_decode(ctx, llama_batch_get_one(tokens, n)) != 0) {
            fprintf(stderr, "llama_decode failed while reading the prompt\n");
            exit(1);
        }
    }
    llama_synchronize(ctx);
    free(tokens);
    return now_seconds() - started;
}

/* Writes n_gen tokens, one decode each; returns the seconds it took. */
static double write_tokens(struct llama_context *ctx, int n_vocab, int n_gen) {
    llama_token token = rand() % n_vocab;
    double started = now_seconds();
    for (int i = 0; i < n_gen; i++) {
        if (llama_decode(ctx, llama_batch_get_one(&token, 1)) != 0) {
            fprintf(stderr, "llama_decode failed while writing\n");
            exit(1);
        }
        llama_synchronize(ctx);
        token = rand() % n_vocab;
    }
    return now_seconds() - started;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s MODEL.gguf THREADS N_PROMPT N_GEN REPETITIONS [BATCH]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int threads = atoi(argv[2]), n_prompt = atoi(argv[3]), n_gen = atoi(argv[4]), reps = atoi(argv[5]);
    int batch = argc == 7 ? atoi(argv[6]) : 512;
    if (threads < 1 || n_prompt < 1 || n_gen < 1 || reps < 1 || batch < 1 || batch > 512 || n_prompt + n_gen > 4096) {
        fprintf(stderr, "THREADS, N_PROMPT, N_GEN, REPETITIONS and BATCH (at most 512) are positive, N_PROMPT + N_GEN at most 4096\n");
        return 2;
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model *model = llama_model_load_from_file(path, llama_model_default_params());
    if (!model) {
        fprintf(stderr, "%s could not be loaded\n", path);
        return 1;
    }
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    /* As the worker makes its context (core/src/local_model/worker.rs). */
    struct llama_context_params params = llama_context_default_params();
    params.n_ctx = 4096;
    params.n_batch = 512;
    params.n_ubatch = 512;
    params.n_threads = threads;
    params.n_threads_batch = threads;
    struct llama_context *ctx = llama_init_from_model(model, params);
    if (!ctx) {
        fprintf(stderr, "no context of 4096 tokens for %s\n", path);
        return 1;
    }
    srand(1);
    /* The file's name as a JSON string: a quote, a backslash or a control character in it
       becomes '_' (the bench matches rows by name, and such names are no GGUF's). */
    char name[256];
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(name, sizeof name, "%s", base);
    for (char *c = name; *c; c++) {
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '_';
    }
    /* A warm-up read, as llama-bench does, then the measured repetitions. */
    llama_memory_clear(llama_get_memory(ctx), true);
    read_prompt(ctx, n_vocab, n_prompt < batch ? n_prompt : batch, batch);
    double prompt_ts = 0, write_ts = 0;
    for (int r = 0; r < reps; r++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        prompt_ts += n_prompt / read_prompt(ctx, n_vocab, n_prompt, batch);
        /* Writing measured at the prompt's depth (its reading is not timed again). */
        write_ts += n_gen / write_tokens(ctx, n_vocab, n_gen);
    }
    printf("[\n");
    printf("  {\"model_filename\": \"%s\", \"n_prompt\": %d, \"n_gen\": 0, \"n_depth\": 0, \"n_batch\": %d, \"n_threads\": %d, "
           "\"avg_ts\": %.3f},\n",
           name, n_prompt, batch, threads, prompt_ts / reps);
    printf("  {\"model_filename\": \"%s\", \"n_prompt\": 0, \"n_gen\": %d, \"n_depth\": %d, \"n_batch\": 1, \"n_threads\": %d, "
           "\"avg_ts\": %.3f}\n",
           name, n_gen, n_prompt, threads, write_ts / reps);
    printf("]\n");
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
