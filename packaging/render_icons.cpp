// Renders resources/kestrel.svg to the PNG sizes of the hicolor icon theme:
//   kestrel-render-icons resources/kestrel.svg resources/icons/hicolor
// Run it by hand when the SVG changes (`ninja kestrel-render-icons`); the PNGs
// are committed so that packaging needs no SVG renderer.
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char* argv[]) {
    QGuiApplication app(argc, argv);
    if (argc != 3) {
        std::fprintf(stderr, "usage: kestrel-render-icons ICON.svg OUTPUT_DIR\n");
        return 2;
    }
    QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
    if (!svg.isValid()) {
        std::fprintf(stderr, "%s: not a valid SVG\n", argv[1]);
        return 1;
    }
    for (int size : {16, 24, 32, 48, 64, 128, 256, 512}) {
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        svg.render(&painter, QRectF(0, 0, size, size));
        painter.end();
        const QString dir = QStringLiteral("%1/%2x%2/apps").arg(QString::fromLocal8Bit(argv[2])).arg(size);
        QDir().mkpath(dir);
        if (!image.save(dir + QStringLiteral("/kestrel.png"))) {
            std::fprintf(stderr, "cannot write %s/kestrel.png\n", qPrintable(dir));
            return 1;
        }
    }
    return 0;
}
