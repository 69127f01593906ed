#include "app/startupclock.h"

#include "app/diagnose/diagnosepage.h"

#include <QApplication>
#include <QDateTime>
#include <QEvent>
#include <QFile>
#include <QTimer>
#include <QWidget>

#include <cstdio>

#include <unistd.h>

using namespace Qt::StringLiterals;

namespace moetune {

StartupClock::StartupClock(QWidget *window, DiagnosePage *page)
    : QObject(window)
    , m_page(page) {
    window->installEventFilter(this);
}

qint64 StartupClock::processStartMs() {
    QFile stat(u"/proc/self/stat"_s);
    QFile boot(u"/proc/stat"_s);
    if (!stat.open(QIODevice::ReadOnly) || !boot.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray line = stat.readAll();
    // The command name may hold spaces and parentheses: count fields after its closing ')'. There the
    // first field is the state (field 3 of proc(5)), so the start time (field 22) is index 19.
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 20)
        return -1;
    const qint64 ticks = fields.at(19).toLongLong();
    qint64 bootSeconds = -1;
    for (const QByteArray &l : boot.readAll().split('\n')) {
        if (l.startsWith("btime "))
            bootSeconds = l.mid(6).trimmed().toLongLong();
    }
    const long hz = sysconf(_SC_CLK_TCK);
    if (bootSeconds < 0 || hz <= 0)
        return -1;
    return bootSeconds * 1000 + ticks * 1000 / hz;
}

bool StartupClock::eventFilter(QObject *watched, QEvent *event) {
    if (event->type() == QEvent::Paint && m_painted < 0) {
        m_painted = QDateTime::currentMSecsSinceEpoch();
        // The paint event comes before the flush to the screen: stamp again once the loop is idle.
        QTimer::singleShot(0, this, [this] {
            m_shown = QDateTime::currentMSecsSinceEpoch();
            if (m_page && m_page->isBusy())
                connect(m_page, &DiagnosePage::diagnosisFinished, this, &StartupClock::report,
                        Qt::SingleShotConnection);
            else
                report();
        });
    }
    return QObject::eventFilter(watched, event);
}

void StartupClock::report() {
    const qint64 diagnosed = QDateTime::currentMSecsSinceEpoch();
    std::printf("process_start_ms %lld\nfirst_paint_ms %lld\nfirst_shown_ms %lld\ndiagnosed_ms %lld\n",
                static_cast<long long>(processStartMs()), static_cast<long long>(m_painted),
                static_cast<long long>(m_shown), static_cast<long long>(diagnosed));
    std::fflush(stdout);
    QApplication::exit(0);
}

} // namespace moetune
