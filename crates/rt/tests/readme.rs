//! The runtime examples of docs/runtime.md, kept true.

#[test]
fn readme_example_runs_on_every_policy() -> Result<(), Box<dyn std::error::Error>> {
    for policy in ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
        let rt = schedlab_rt::Builder::new().workers(2).policy(policy).build()?;
        let (tx, rx) = async_channel::unbounded();
        let consumer = rt.spawn(async move {
            let mut sum = 0u64;
            while let Ok(v) = rx.recv().await {
                sum += v;
            }
            sum
        });
        rt.block_on(async move {
            for i in 0..1000 {
                tx.send(i).await.unwrap();
            }
        });
        assert_eq!(rt.block_on(consumer)?, 499_500, "{policy}");
        rt.shutdown();
    }
    Ok(())
}

#[test]
fn readme_channel_example_runs_on_every_policy() -> Result<(), Box<dyn std::error::Error>> {
    for policy in ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
        let rt = schedlab_rt::Builder::new().workers(2).policy(policy).build()?;
        let (tx, mut rx) = schedlab_rt::channel::unbounded::<u64>();
        let consumer = rt.spawn(async move {
            let mut sum = 0;
            while let Some(v) = rx.recv().await {
                sum += v;
            }
            sum
        });
        for i in 0..1000 {
            tx.send(i)?;
        }
        drop(tx);
        assert_eq!(rt.block_on(consumer)?, 499_500, "{policy}");
        rt.shutdown();
    }
    Ok(())
}
