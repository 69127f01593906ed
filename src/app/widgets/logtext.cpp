#include "app/widgets/logtext.h"

#include <QRegularExpression>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace moetune {

QString displayLogText(const QString &raw) {
    if (!raw.contains(u'\x1b') && !raw.contains(u'\r'))
        return raw;
    static const QRegularExpression ansi(u"\\x1b\\[[0-9;?]*[ -/]*[@-~]"_s);
    QString text = raw;
    text.remove(ansi);
    text.replace(u"\r\n"_s, u"\n"_s);
    if (!text.contains(u'\r'))
        return text;
    QStringList lines = text.split(u'\n');
    for (QString &line : lines) {
        // A bar that ends in CR (redrawn, then a newline) keeps its last non-empty state.
        while (line.endsWith(u'\r'))
            line.chop(1);
        const qsizetype cr = line.lastIndexOf(u'\r');
        if (cr >= 0)
            line = line.mid(cr + 1);
    }
    return lines.join(u'\n');
}

} // namespace moetune
