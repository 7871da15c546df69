/*
 * livetrack: one command for everything around the libraries: running a
 * program under them and reading what they wrote.
 *
 * This file only dispatches; each subcommand is in its cli_<name>.c and
 * prints its own --help.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "livetrack/livetrack.h"

#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)

const char *cli_version(void)
{
    /* The tool reads what the library writes: they share one version. */
    return STRINGIFY(LIVETRACK_VERSION_MAJOR) "." STRINGIFY(LIVETRACK_VERSION_MINOR) "." STRINGIFY(
        LIVETRACK_VERSION_PATCH);
}

typedef struct command {
    const char *name;
    int (*main)(int argc, char **argv);
} command;

static const command commands[] = {
    {"run", cli_run},     {"report", cli_report}, {"diff", cli_diff},
    {"plot", cli_plot},   {"trace", cli_trace},   {"pprof", cli_pprof},
};

static void usage(FILE *out)
{
    fputs("usage: livetrack COMMAND [ARGUMENTS]\n"
          "\n"
          "livetrack finds the objects a GPU-compute program (OpenCL, Level Zero, CUDA) leaks or\n"
          "misuses, and says which line created them.\n"
          "\n"
          "Commands:\n"
          "  run     run a program with livetrack armed; its leak report is printed when it exits\n"
          "            livetrack run [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "  report  print a saved JSON report as text, by call site, type or API\n"
          "            livetrack report FILE.json [--by site|type|api] [--top N] [--peak]\n"
          "  diff    the leaks in NEW at call sites that BASE does not have (exit status 1 if any)\n"
          "            livetrack diff BASE.json NEW.json [--ignore-lines] [--source-root BASE_DIR=NEW_DIR]\n"
          "  plot    charts of a run as one self-contained HTML page, or its timeline as SVG\n"
          "            livetrack plot FILE.csv [FILE.json] -o REPORT.html|TIMELINE.svg\n"
          "  trace   a run's timeline as Chrome/Perfetto trace-event JSON\n"
          "            livetrack trace FILE.csv [FILE.json] -o TRACE.json\n"
          "  pprof   the leaked (or peak) objects by call site as a pprof profile\n"
          "            livetrack pprof FILE.json [--set leak|peak] -o PROFILE.pb.gz\n"
          "  help    livetrack help COMMAND: the options of COMMAND (same as COMMAND --help)\n"
          "\n"
          "Options:\n"
          "  -h, --help     show this help and exit\n"
          "  -V, --version  show the version and exit\n"
          "\n"
          "A session:\n"
          "  livetrack run --json run.json --csv run.csv -- ./app     # leak report on stderr at exit\n"
          "  livetrack report run.json --by type\n"
          "  livetrack plot run.csv run.json -o report.html           # open in any browser\n"
          "  livetrack diff main.json run.json                        # in CI: fails on new leak sites\n"
          "\n"
          "Exit status: run passes the program's status through (128+N when signal N ended it);\n"
          "diff exits with 1 when NEW has leaks at new call sites; 2 means bad arguments, or an\n"
          "input or output file that cannot be used; otherwise 0.\n",
          out);
}

int main(int argc, char **argv)
{
    cli_parser parser;
    cli_parser_init(&parser, NULL, argc - 1, argv + 1);
    if (!cli_more(&parser))
        cli_fail("no command given (see 'livetrack --help')");
    if (cli_flag(&parser, "help", 'h')) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (cli_flag(&parser, "version", 'V')) {
        printf("livetrack %s\n", cli_version());
        return CLI_EXIT_OK;
    }
    const char *name = argv[1];
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (argc > 3)
            cli_fail("help takes one command name (see 'livetrack --help')");
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
            if (!strcmp(argv[2], commands[i].name)) {
                char help[] = "--help";
                char *help_argv[] = {argv[2], help, NULL};
                return commands[i].main(2, help_argv);
            }
        }
        cli_fail("no command '%s' (see 'livetrack --help')", argv[2]);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].main(argc - 1, argv + 1);
    if (name[0] == '-')
        cli_unknown(&parser);
    cli_fail("no command '%s' (see 'livetrack --help')", name);
}
