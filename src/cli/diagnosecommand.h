#pragma once

#include "cli/command.h"

namespace moetune::cli {

// `moetune-cli diagnose [FILE|-] [--format text|json|markdown] [--rules DIR] [--no-color]`
class DiagnoseCommand : public Command {
public:
    QString name() const override;
    QString summary() const override;
    ApplicationKind applicationKind() const override { return ApplicationKind::Core; }
    int run(const QStringList &args) override;

    // Bytes of the head of the input checked for NUL bytes before a log is accepted as text.
    static constexpr qint64 kBinaryProbeBytes = 64 * 1024;
    // Offset of the first NUL byte in `head`, or -1: a text log never has one.
    static qsizetype binaryOffset(QByteArrayView head);
};

} // namespace moetune::cli
