// Where r3check finds the corpus and the engine adapters when no flag or
// environment variable names them: an installed r3check (`meson install`)
// in its data dir, PREFIX/share/r3check; the r3check of a build dir in the
// source tree it was built from.
#ifndef R3_CLI_DATA_DIRS_H_
#define R3_CLI_DATA_DIRS_H_

#include <string>

namespace r3::cli {

// DATADIR/r3check of an installed r3check, found from the binary's own path
// (so a DESTDIR staging or a moved prefix works); "" when there is none
// next to this binary, as for the one in a build dir.
std::string InstalledDataDir();

// The corpus that ships with this binary: InstalledDataDir()/corpus, else
// the source tree's corpus/.
std::string ShippedCorpusDir();

// $R3CHECK_CORPUS when set, else ShippedCorpusDir().
std::string DefaultCorpusDir();

// $R3_ENGINES_DIR when set, else InstalledDataDir()/engines, else the source
// tree's engines/.
std::string DefaultEnginesDir();

}  // namespace r3::cli

#endif  // R3_CLI_DATA_DIRS_H_
