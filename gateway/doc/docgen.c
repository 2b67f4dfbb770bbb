/*
 * docgen: the man page and the example configuration (see docgen.h).
 */
#include "gateway/doc/docgen.h"

#include <stdbool.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/doc/help.h"

/* Text for roff: a backslash as \e, a dash next to a dash as \- (option
 * names: "--port" must not become a hyphen), a line never starting with
 * '.' or '\'' (a request). */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (const char *p = s; *p; p++) {
		if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '-' && (p[1] == '-' || (p > s && p[-1] == '-')))
			fputs("\\-", f);
		else if (*p == '-' && p == s)
			fputs("\\-", f);
		else
			fputc(*p, f);
	}
}

/* The value a option takes, as --help would name it. */
static const char *value_word(const struct cfg_option_info *o)
{
	static const struct {
		const char *type, *word;
	} words[] = {
		{"string", "VALUE"}, {"int", "N"},	 {"duration", "DURATION"},
		{"size", "SIZE"},    {"bool", "yes|no"}, {"seconds", "SECONDS"},
		{"mode", "MODE"},
	};
	if (o->choices[0])
		return o->choices;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(o->type, words[i].type) == 0)
			return words[i].word;
	return "VALUE";
}

static void man_option(const struct cfg_option_info *o, void *arg)
{
	FILE *f = arg;
	fputs(".TP\n\\fB", f);
	roff(f, "--");
	roff(f, o->name);
	fputs("\\fR \\fI", f);
	roff(f, value_word(o));
	fputs("\\fR\n", f);
	roff(f, o->help);
	fputs(".\n.br\nDefault: ", f);
	roff(f, o->def ? o->def : o->no_default ? o->no_default : "none");
	fputs("; environment: \\fB", f);
	roff(f, o->env);
	fputs("\\fR.\n", f);
}

static void man_command(const struct help_entry *e, void *arg)
{
	FILE *f = arg;
	fputs(".TP\n.B ", f);
	roff(f, e->syntax);
	fputc('\n', f);
	roff(f, e->summary[0] ? e->summary : "(no summary)");
	fputc('\n', f);
}

/* The page's fixed text, before OPTIONS. */
static const char head[] =
	".SH NAME\n"
	"leasegate \\- leases on named locks over the Redis and PostgreSQL protocols, "
	"stored in DynamoDB\n"
	".SH SYNOPSIS\n"
	".B leasegate\n"
	"[\\fB\\-\\-option\\fR \\fIvalue\\fR]...\n"
	".br\n"
	".B leasegate lock\n"
	"[\\fIoptions\\fR] \\fINAME\\fR \\-\\- \\fIcommand\\fR [\\fIargs\\fR...]\n"
	".br\n"
	".B leasegate help\n"
	"[\\fICOMMAND\\fR [\\fISUBCOMMAND\\fR]]\n"
	".br\n"
	".B leasegate \\-\\-probe\n"
	"[\\fIpath\\fR] [\\fIoptions\\fR]\n"
	".SH DESCRIPTION\n"
	".B leasegate\n"
	"is a server that gives clients leases on named locks and runs leader elections. "
	"Clients speak the Redis protocol (LOCK.ACQUIRE, LOCK.RENEW, LOCK.RELEASE, "
	"LEADER.CAMPAIGN...) or the PostgreSQL wire protocol (SELECT leasegate.acquire(...)). "
	"The locks live in a DynamoDB table (\\fB\\-\\-table\\fR), so that replicas contend as "
	"separate processes; without a table they live in the process (the embedded store).\n"
	".PP\n"
	"A lease holds while its connection lives: the gateway renews it, and releases it "
	"when the connection closes. Every acquire returns a fencing token that rises with "
	"each holder.\n"
	".PP\n"
	"Options come from, lowest precedence first: their defaults, the configuration file "
	"(\\fB\\-\\-config\\fR or \\fBLEASEGATE_CONFIG\\fR; lines \\fIname value\\fR, "
	"\\fB#\\fR comments), the environment (\\fBLEASEGATE_\\fR\\fINAME\\fR), the command "
	"line (\\fB\\-\\-name value\\fR or \\fB\\-\\-name=value\\fR). Durations take ms, s, m, "
	"h or d (a bare number is ms); sizes take kb, mb or gb.\n"
	".SH OPTIONS\n";

static const char tail[] =
	".TP\n.B \\-\\-help\nthe options, briefly.\n"
	".TP\n.B \\-\\-version\nthe version.\n"
	".TP\n.B \\-\\-options\nthe option table, one tab\\-separated line per option.\n"
	".TP\n.B \\-\\-man\nthis page, in roff.\n"
	".TP\n.B \\-\\-example\\-config\nthe example configuration file.\n"
	".SH SUBCOMMANDS\n"
	".TP\n.B lock\nruns a command while holding a lock of a running gateway "
	"(\\fBleasegate lock \\-\\-help\\fR).\n"
	".TP\n.B help\nthe Redis commands with their syntax and summary; "
	"\\fBhelp\\fR \\fICOMMAND\\fR for one.\n"
	".TP\n.B \\-\\-probe\nGETs a path (default /readyz) on the admin port of a running "
	"gateway: exit 0 on 200, else 1.\n"
	".SH REDIS COMMANDS\n";

static const char end_fmt[] =
	".SH ENVIRONMENT\n"
	"Every option as \\fBLEASEGATE_\\fR\\fINAME\\fR (upper case, \\- as _). "
	"DynamoDB: the AWS credential chain (\\fBAWS_ACCESS_KEY_ID\\fR, "
	"\\fBAWS_PROFILE\\fR, web identity, container and instance credentials), "
	"\\fBAWS_REGION\\fR, \\fBAWS_ENDPOINT_URL_DYNAMODB\\fR. Traces: "
	"\\fBOTEL_EXPORTER_OTLP_ENDPOINT\\fR.\n"
	".SH FILES\n"
	".TP\n.I %s/leasegate/leasegate.conf\n"
	"the configuration the systemd unit leasegate.service passes to \\fB\\-\\-config\\fR "
	"(installed from \\fBleasegate \\-\\-example\\-config\\fR).\n"
	".SH SIGNALS\n"
	".TP\n.B SIGTERM\\fR, \\fBSIGINT\n"
	"stop accepting, close the sessions and release their leases, exit.\n"
	".TP\n.B SIGHUP\n"
	"reopen \\fB\\-\\-log\\-file\\fR, reload \\fB\\-\\-aclfile\\fR and the TLS files.\n"
	".SH EXIT STATUS\n"
	"0 after a clean stop; 1 when the configuration is refused, a port cannot be opened "
	"or the lock store cannot be opened (the reason is logged).\n"
	".SH SEE ALSO\n"
	".BR redis\\-cli (1),\n"
	".BR psql (1)\n";

int doc_man(FILE *f, const char *sysconfdir)
{
	fprintf(f, ".TH LEASEGATE 1 \"\" \"leasegate %s\" \"User Commands\"\n", LG_VERSION);
	fputs(head, f);
	cfg_foreach_option(man_option, f);
	fputs(tail, f);
	if (help_foreach(man_command, f) != 0)
		return -1;
	fprintf(f, end_fmt, sysconfdir);
	return 0;
}

/* Writes s as "# " comment lines of at most 76 columns. */
static void comment(FILE *f, const char *s)
{
	while (*s) {
		size_t len = strlen(s), cut = len;
		if (len > 74) {
			cut = 74;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = strcspn(s, " ");
		}
		fprintf(f, "# %.*s\n", (int)cut, s);
		s += cut;
		s += strspn(s, " ");
	}
}

static void example_option(const struct cfg_option_info *o, void *arg)
{
	FILE *f = arg;
	if (!o->file_ok)
		return;
	fputc('\n', f);
	comment(f, o->help);
	/* commented out, as sshd_config's defaults: a line set in the file
	 * counts as given (cfg_given: the default PostgreSQL and admin ports
	 * move to a free port when taken, a given one does not) */
	if (o->def) {
		fprintf(f, "#%s %s\n", o->name, o->def);
		return;
	}
	char line[200];
	snprintf(line, sizeof(line), "(default: %s)", o->no_default ? o->no_default : "none");
	comment(f, line);
	fprintf(f, "#%s %s\n", o->name, o->secret ? "SECRET" : value_word(o));
}

void doc_example_config(FILE *f)
{
	fprintf(f,
		"# leasegate %s: the configuration file (--config FILE, or LEASEGATE_CONFIG).\n"
		"# Every option is here, commented out at its default: to set one, remove\n"
		"# the # of its line and change the value. Lines `name value`, # comments.\n"
		"# The environment (LEASEGATE_<NAME>) and the command line override it.\n"
		"# A file that sets requirepass or pg-password must be readable by its\n"
		"# owner alone (chmod 600); prefer requirepass-file and pg-password-file.\n"
		"# Generated by `leasegate --example-config`; `man leasegate` explains each.\n",
		LG_VERSION);
	cfg_foreach_option(example_option, f);
}
