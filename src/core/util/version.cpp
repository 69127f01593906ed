#include "core/util/version.h"

namespace moetune {

QString versionString() {
    return QStringLiteral(MOETUNE_VERSION);
}

} // namespace moetune
