/*
 * docgen: the documents generated from the tables, so that they say what
 * the binary does: the man page leasegate(1) (`leasegate --man`: the
 * options from the option table of config.c, the Redis commands from the
 * command table, help.h) and the example configuration file
 * (`leasegate --example-config`: every option commented out at its
 * default, with its help as a comment, in the syntax --config reads). `make install`
 * installs both (Makefile).
 *
 * Not here: the option table (config.c), the commands (gateway/redis/).
 */
#ifndef LG_DOCGEN_H
#define LG_DOCGEN_H

#include <stdio.h>

/* Writes the man page, in roff (man macros), to f. sysconfdir is where
 * the configuration file is installed ("/etc"), for FILES. Returns 0, -1
 * on out-of-memory. */
int doc_man(FILE *f, const char *sysconfdir) __attribute__((warn_unused_result));

/* Writes the example configuration to f: the gateway accepts it as it is
 * (--config FILE) and then runs as with no file. */
void doc_example_config(FILE *f);

#endif
