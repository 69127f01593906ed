#include "core/diagnosis/logreader.h"

namespace moetune {

LogReader::LogReader(QList<QByteArray> literals)
    : m_literals(std::move(literals)) {}

bool LogReader::readFile(const QString &, const HitHandler &, const Progress &, QString *) {
    return false; // TODO
}

bool LogReader::readDevice(QIODevice *, const HitHandler &, const Progress &, QString *) {
    return false; // TODO
}

void LogReader::readBuffer(QByteArrayView, const HitHandler &, const Progress &) {}

QByteArray LogReader::cleanLine(QByteArrayView line) {
    return line.toByteArray();
}

bool LogReader::endsInsideConfigPath(QByteArrayView) {
    return false;
}

qint64 LogReader::countNewlines(QByteArrayView data) {
    return data.count('\n');
}

qsizetype LogReader::scanBlock(QByteArrayView block, bool, const HitHandler &) {
    return block.size();
}

void LogReader::reset() {}

} // namespace moetune
