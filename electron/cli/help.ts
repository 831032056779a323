/** The `labstation --help` text (cli.ts prints it; so does `station --help`, cli/run.ts). */
export const HELP = `labstation — instrument station and facility server

Usage:
  labstation station --data DIR [--port N] [--demo] [--server URL --key KEY]
                                                      run a headless station; prints the UI URL
                                                      (--server and --key are kept in DIR)
  labstation serve --data DIR [--host H] [--port N] [--time-zone TZ]
                                                      run the server (default 127.0.0.1:8080)
  labstation admin user create --data DIR --email E --password P [--role admin|staff|user] [--username U]
  labstation admin token create --data DIR --user EMAIL    prints a new API token (last line)
  labstation admin station create --data DIR --name NAME --tool TOOL
                                                      registers a station; prints its key (last line)
  labstation mail list --data DIR [--status S] [--json]
                                                      print a server's mails, newest first (S:
                                                      queued, sent, failed, cancelled), with why
                                                      the last try failed
  labstation mail retry --data DIR ID... | --all-failed
                                                      send failed mails again (after fixing SMTP
                                                      or an address); exit 1 if one is not
                                                      queued again, naming why
  labstation import --data DIR FILE.json              load a facility bundle into a data dir
  labstation questions check FILE                     validate a question list
  labstation questions answer QUESTIONS ANSWERS       validate answers, print canonical answers
  labstation metadata check FILE                      validate notebook entry metadata (errors one
                                                      per line; notices go to stderr)
  labstation metadata convert FILE --to elabftw|notebook
                                                      print the metadata in the notebook service's
                                                      form (elabftw) or in Labstation's (notebook)
  labstation experiment --event FILE --reservations FILE [--areas IDS] [--now ISO]
                                                      print the experiment record of a usage
                                                      event (read API shapes); exit 1 when the
                                                      rules give none, with each source's reason
  labstation usage --data DIR [--json|--csv] [--tool NAME]
                                                      print the usage events
  labstation harvest --data DIR [--once]              harvest the station's instruments: with
                                                      --once, walk every watched folder, transfer
                                                      what is stable, exit (1 if any failed, a
                                                      folder could not be read or a file was
                                                      left for the next run); without, keep
                                                      watching until stopped
  labstation files --data DIR [--json] [--state S] [--search TEXT]
                                                      print the file records (S: waiting, failed,
                                                      done, gone; TEXT: a part of the path below
                                                      the watched folder, a whole source path or
                                                      a folder's, or an ARK)
  labstation transfers --data DIR [--json] [--file ID]
                                                      print the transfer records
  labstation unlock --data DIR [--login NAME]         lift the lock that wrong PINs put on log-on
                                                      at the station (or on one login: a username
                                                      or badge); exit 1 if it was not locked

Exit codes: 0 ok, 1 input refused (one problem per line), 2 wrong usage.
`;
