#pragma once

#include <QObject>

class QWidget;

namespace moetune {

class DiagnosePage;

// `moetune --startup-time`: prints when the process started, when the first window was painted and
// shown, and when the first log was diagnosed (ms since the epoch), then quits.
// tests/bench/first_window_bench.sh reads these lines.
class StartupClock : public QObject {
public:
    StartupClock(QWidget *window, DiagnosePage *page);

    // The process's start (Linux: /proc/self/stat after boot + /proc/stat's boot time; clock-tick
    // resolution), in ms since the epoch, or -1 where that cannot be read.
    static qint64 processStartMs();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void report();

    DiagnosePage *m_page;
    qint64 m_painted = -1;
    qint64 m_shown = -1;
};

} // namespace moetune
