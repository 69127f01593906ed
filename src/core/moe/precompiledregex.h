#pragma once

#include <QRegularExpression>
#include <QString>

namespace moetune {

// A pattern compiled (and JIT-ed) now, so that threads sharing it later only read it.
inline QRegularExpression precompiledRegex(const QString &pattern) {
    QRegularExpression re(pattern);
    re.optimize();
    return re;
}

} // namespace moetune
