//! What every formatter prints, digit for digit.

use super::*;

#[test]
fn values_parse_as_programs_print_them() {
    assert_eq!(parse_value("5,194,253", ""), Ok(5_194_253.0));
    assert_eq!(parse_value("5_194_253", ""), Ok(5_194_253.0));
    assert_eq!(parse_value("5 194 253.5", ""), Ok(5_194_253.5));
    assert_eq!(parse_value("+12", ""), Ok(12.0));
    assert_eq!(parse_value("-1,000", ""), Ok(-1000.0));
    assert_eq!(parse_value("12.5ms", "ms"), Ok(12.5));
    assert_eq!(parse_value("12.5 ms", "ms"), Ok(12.5));
    assert_eq!(parse_value("1e3", ""), Ok(1000.0));
    assert!(
        parse_value("1,5", "")
            .unwrap_err()
            .starts_with("is ambiguous")
    );
    assert!(
        parse_value("12,34,567", "")
            .unwrap_err()
            .starts_with("is ambiguous")
    );
    assert_eq!(parse_value("12.5ms", ""), Err("is not a number".into()));
    assert_eq!(
        parse_value("nan", ""),
        Err("is NaN, not a number lab can use".into())
    );
    assert_eq!(
        parse_value("-Infinity", ""),
        Err("is infinite, not a number lab can use".into())
    );
    assert_eq!(
        parse_value("1e400", ""),
        Err("is beyond the largest number lab can hold (about 1.8e308)".into())
    );
}

#[test]
fn three_significant_digits() {
    assert_eq!(significant(8.4123, 3), "8.41");
    assert_eq!(significant(0.21345, 3), "0.213");
    assert_eq!(significant(30.66, 3), "30.7");
    assert_eq!(significant(1234.6, 3), "1235");
    assert_eq!(significant(9.996, 3), "10.0");
    assert_eq!(significant(0.0, 3), "0");
    assert_eq!(significant(-2.5, 3), "-2.50");
    assert_eq!(significant(1.5e-7, 3), "1.50e-7");
    assert_eq!(significant(f64::NAN, 3), "n/a");
}

#[test]
fn units_and_seconds() {
    assert_eq!(value(8.4, "Mops/s"), "8.40 Mops/s");
    assert_eq!(seconds(2.3104), "2.31 s");
    assert_eq!(seconds(0.000568), "568 µs");
    assert_eq!(value(0.0002, "ms"), "200 ns");
    assert_eq!(value(0.568, "ms"), "0.568 ms");
    assert_eq!(value(12.5, "ms"), "12.5 ms");
    assert_eq!(value(3.2, "GHz"), "3.20 GHz");
    assert_eq!(value(1.5, "mops"), "1.50 mops");
    assert_eq!(percent(0.0423), "4.2%");
}

#[test]
fn prefixes_for_large_and_small_values() {
    assert_eq!(value(276_434_891.0, "ops/s"), "276 M ops/s");
    assert_eq!(value(7.86e-5, "parks/op"), "78.6 µ parks/op");
    assert_eq!(value(0.0938, "Mops/s"), "0.0938 Mops/s");
    assert_eq!(value(1234.6, ""), "1235");
    assert_eq!(value(12_345.0, ""), "12.3 k");
    assert_eq!(value(999_600.0, "B"), "1.00 MB");
    assert_eq!(value(-2.5e7, ""), "-25.0 M");
    assert_eq!(value(3e-15, "s"), "0.00300 ps");
    assert_eq!(value(0.0, "ops"), "0 ops");
    assert_eq!(
        interval(276_434_891.0, 247_400_433.0, 350_390_866.0, "ops/s"),
        "276 M [247 M, 350 M]"
    );
    assert_eq!(
        interval(7.86e-5, 6.58e-5, 0.000112, ""),
        "78.6 µ [65.8 µ, 112 µ]"
    );
}

#[test]
fn memory_in_binary_units() {
    assert_eq!(memory(24_684_092.0 * 1024.0), "23.5 GiB");
    assert_eq!(memory(512.0 * 1048576.0), "512 MiB");
    assert_eq!(memory(12.0), "12 B");
    assert_eq!(value(2048.0, "MiB"), "2.00 GiB");
    assert_eq!(value(45.26, "MiB"), "45.3 MiB");
    assert_eq!(number(45.26, "MiB"), "45.3");
}

#[test]
fn axis_labels_are_the_tick_values() {
    let ticks = [0.0, 25.0, 50.0, 75.0, 100.0, 125.0, 150.0];
    assert_eq!(
        axis_labels(&ticks, 25.0),
        ["0", "25", "50", "75", "100", "125", "150"]
    );
    assert_eq!(axis_labels(&[0.0, 0.2, 0.4], 0.2), ["0", "0.2", "0.4"]);
    assert_eq!(
        axis_labels(&[0.0, 1e8, 2e8, 3e8], 1e8),
        ["0", "100M", "200M", "300M"]
    );
    assert_eq!(
        axis_labels(&[2e-5, 4e-5, 6e-5], 2e-5),
        ["20µ", "40µ", "60µ"]
    );
    assert_eq!(parse_prefixed("2.5k"), Some(2500.0));
    assert!((parse_prefixed("78.6 µ").unwrap() - 78.6e-6).abs() < 1e-18);
}

#[test]
fn estimates_durations_and_widths() {
    use crate::units::Nanos;
    use lab_basis::{Estimate, Interval};
    let e = Estimate::new(
        276_434_891.0,
        Interval {
            lo: 247_400_433.0,
            hi: 350_390_866.0,
            level: 0.95,
        },
    );
    assert_eq!(estimate(&e, "ops/s"), "276 M ops/s [247 M, 350 M]");
    assert_eq!(
        ratio_interval(0.3843, 0.3441, 0.5832),
        "0.384 [0.344, 0.583]"
    );
    assert_eq!(ratio_bounds(0.3441, 0.5832), "[0.344, 0.583]");
    assert_eq!(p_value(0.0123), "p = 0.012");
    assert_eq!(p_value(3e-7), "p < 0.0001");
    assert_eq!(millis(Nanos(568_000)), "0.568 ms");
    assert_eq!(duration(Nanos(2_310_400_000)), "2.31 s");
    assert_eq!(seconds_fixed(Nanos(2_310_400_000).seconds()), "2.310 s");
    assert_eq!(width("µs×"), 3);
    assert_eq!(width("数据"), 4);
    assert_eq!(pad("数据", 6), "数据  ");
    assert_eq!(pad("abc", 2), "abc");
}
