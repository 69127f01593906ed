#pragma once

#include <QString>

namespace moetune {

// The version of moetune (app, CLI and the agent it deploys share it).
QString versionString();

} // namespace moetune
